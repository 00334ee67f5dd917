"""Each source package's binaries (SourcePackageBinary), kept by database triggers.

The crash ingest asks, for every version a crash report lists, whether it is one of the
crashing package's own binaries (its own versions are not a sample of what machines run).
Read from the publications, that is a read of every publication of the package (about 40
in an archive of 800,000); from this table it is one index probe. Triggers keep it, as
they keep the data version (packages.data_version), so that no write path can forget it:
the sync's bulk statements, the backtest's archive, the admin, a fixture or a psql session.

- a new publication adds its binaries (on PostgreSQL once per statement, from the rows
  the statement inserted, so a sync's bulk insert costs one more statement);
- a publication whose binaries or package change, or that is deleted, has its package's
  rows rebuilt from the publications left (rare: the product never changes binaries).

Only the JSON strings of a publication's `binaries` list count, as `jsonb_exists` counted
them. SQLite rebuilds a table it alters without its triggers: a migration that alters the
publication table puts them back with the data version's
`packages.data_version.triggers_reinstall_operation`, as it does the data version's.
"""

from __future__ import annotations

from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations import RunPython

from packages.models import Publication, SourcePackageBinary

PUBLICATION_TABLE = Publication._meta.db_table
_BINARY = SourcePackageBinary._meta.db_table
_ADDED, _REBUILT = "phasing_binaries_added", "phasing_binaries_rebuilt"
TRIGGERS = (_ADDED, f"{_REBUILT}_changed", f"{_REBUILT}_removed")


def _pg_names(publication: str) -> str:
    """SQL: the (package, binary name) pairs of the rows `publication` names."""
    return (
        f"SELECT DISTINCT p.source_package_id, b.value #>> '{{}}' FROM {publication} p, "
        "jsonb_array_elements(CASE jsonb_typeof(p.binaries) WHEN 'array' THEN p.binaries "
        "ELSE '[]'::jsonb END) AS b WHERE jsonb_typeof(b.value) = 'string'"
    )


def _sqlite_names(publication: str) -> str:
    return (
        f"SELECT p.source_package_id, b.value FROM {publication} p, json_each(CASE WHEN "
        "json_valid(p.binaries) AND json_type(p.binaries) = 'array' THEN p.binaries "
        "ELSE '[]' END) AS b WHERE b.type = 'text'"
    )


_PG = f"""
CREATE OR REPLACE FUNCTION {_ADDED}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {_BINARY} (source_package_id, name) {_pg_names("added")}
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
CREATE OR REPLACE FUNCTION {_REBUILT}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- NEW is NULL for a delete.
    DELETE FROM {_BINARY} WHERE source_package_id IN (OLD.source_package_id, NEW.source_package_id);
    INSERT INTO {_BINARY} (source_package_id, name) {_pg_names(PUBLICATION_TABLE)}
        AND p.source_package_id IN (OLD.source_package_id, NEW.source_package_id)
        ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
CREATE TRIGGER {_ADDED} AFTER INSERT ON {PUBLICATION_TABLE}
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION {_ADDED}();
CREATE TRIGGER {_REBUILT}_changed AFTER UPDATE OF binaries, source_package_id ON {PUBLICATION_TABLE}
    FOR EACH ROW WHEN (OLD.binaries IS DISTINCT FROM NEW.binaries
        OR OLD.source_package_id <> NEW.source_package_id)
    EXECUTE FUNCTION {_REBUILT}();
CREATE TRIGGER {_REBUILT}_removed AFTER DELETE ON {PUBLICATION_TABLE}
    FOR EACH ROW EXECUTE FUNCTION {_REBUILT}();
"""

_SQLITE_REBUILD = (
    f"DELETE FROM {_BINARY} WHERE source_package_id IN ({{0}}); "
    f"INSERT OR IGNORE INTO {_BINARY} (source_package_id, name) {_sqlite_names(PUBLICATION_TABLE)} "
    "AND p.source_package_id IN ({0});"
)
_SQLITE = (
    f"CREATE TRIGGER {_ADDED} AFTER INSERT ON {PUBLICATION_TABLE} BEGIN "
    f"INSERT OR IGNORE INTO {_BINARY} (source_package_id, name) "
    f"{_sqlite_names(PUBLICATION_TABLE)} AND p.id = NEW.id; END",
    f"CREATE TRIGGER {_REBUILT}_changed AFTER UPDATE OF binaries, source_package_id "
    f"ON {PUBLICATION_TABLE} WHEN OLD.binaries IS NOT NEW.binaries "
    "OR OLD.source_package_id <> NEW.source_package_id BEGIN "
    + _SQLITE_REBUILD.format("OLD.source_package_id, NEW.source_package_id")
    + " END",
    f"CREATE TRIGGER {_REBUILT}_removed AFTER DELETE ON {PUBLICATION_TABLE} BEGIN "
    + _SQLITE_REBUILD.format("OLD.source_package_id")
    + " END",
)


def triggers_install(schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Install the triggers and fill the table from the publications already stored."""
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(_PG)
        names = _pg_names(PUBLICATION_TABLE)
        schema_editor.execute(
            f"INSERT INTO {_BINARY} (source_package_id, name) {names} ON CONFLICT DO NOTHING"
        )
    elif vendor == "sqlite":
        for statement in _SQLITE:
            schema_editor.execute(statement)
        schema_editor.execute(
            f"INSERT OR IGNORE INTO {_BINARY} (source_package_id, name) "
            f"{_sqlite_names(PUBLICATION_TABLE)}"
        )
    else:  # pragma: no cover - the product runs on PostgreSQL or SQLite only
        raise NotImplementedError(f"no binaries triggers for {vendor}")


def triggers_remove(schema_editor: BaseDatabaseSchemaEditor) -> None:
    postgresql = schema_editor.connection.vendor == "postgresql"
    for trigger in TRIGGERS:
        on = f" ON {PUBLICATION_TABLE}" if postgresql else ""
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {trigger}{on}")


def triggers_operation() -> RunPython:
    def install(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        triggers_install(schema_editor)

    def remove(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        triggers_remove(schema_editor)

    return RunPython(install, remove)


def triggers_reinstall(schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Put the triggers back after the publication table was altered (and fill in what was
    published meanwhile); nothing before the migration that made the table."""
    if _BINARY in schema_editor.connection.introspection.table_names():
        triggers_remove(schema_editor)
        triggers_install(schema_editor)


def own_binary_sql(package: str, name: str) -> str:
    """SQL, true when `name` is a binary of the source package `package` (two SQL
    expressions): one probe of the table's unique index."""
    return (
        f"EXISTS (SELECT 1 FROM {_BINARY} o WHERE o.source_package_id = {package} "
        f"AND o.name = {name})"
    )
