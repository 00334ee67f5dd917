"""The data version: a number that every committed write to the pages' data raises.

Cached pages are keyed by it (overview.pages.page_cache), so they are never stale. It is
raised by database triggers, not by Python, so that no write path can forget it: the
event writer's bulk statements, the sync, ingest, the admin, a migration or a psql
session all raise it alike. Apps name their tables in a migration that calls
`triggers_install`; packages never needs to know which tables overview has.

On PostgreSQL the trigger is a deferred constraint trigger: it runs at commit, once per
transaction (a transaction-local setting remembers it ran), so the version row is locked
only for the instant of the commit and a reader who sees the new number also sees the
data it stands for. On SQLite (the embedded default) the whole database has one writer,
so plain row triggers serve: they raise it once per row written, which changes it no
less surely.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import InterfaceError, OperationalError, connection
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations import RunPython

from packages.models import DataVersion

_TABLE = DataVersion._meta.db_table
_FUNCTION = "phasing_data_version_bump"

_PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Once per transaction: the first row's trigger raises it, the others return.
    IF current_setting('phasing.data_version_raised', true) = txid_current()::text THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('phasing.data_version_raised', txid_current()::text, true);
    INSERT INTO {_TABLE} (id, number) VALUES (1, 1)
        ON CONFLICT (id) DO UPDATE SET number = {_TABLE}.number + 1;
    RETURN NULL;
END
$$;
"""

_SQLITE_UPSERT = (
    f"INSERT INTO {_TABLE} (id, number) VALUES (1, 1) "
    f"ON CONFLICT (id) DO UPDATE SET number = number + 1;"
)


def _trigger(table: str, operation: str = "") -> str:
    return f"{_FUNCTION}_{table}{'_' + operation.lower() if operation else ''}"


def triggers_install(schema_editor: BaseDatabaseSchemaEditor, tables: Sequence[str]) -> None:
    """Raise the data version on every insert, update and delete of these tables."""
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(_PG_FUNCTION)
        for table in tables:
            schema_editor.execute(
                f"CREATE CONSTRAINT TRIGGER {_trigger(table)} "
                f"AFTER INSERT OR UPDATE OR DELETE ON {table} "
                f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {_FUNCTION}()"
            )
    elif vendor == "sqlite":
        for table in tables:
            for operation in ("INSERT", "UPDATE", "DELETE"):
                schema_editor.execute(
                    f"CREATE TRIGGER {_trigger(table, operation)} AFTER {operation} ON {table} "
                    f"BEGIN {_SQLITE_UPSERT} END"
                )
    else:  # pragma: no cover - the product runs on PostgreSQL or SQLite only
        raise NotImplementedError(f"no data version triggers for {vendor}")


def triggers_remove(schema_editor: BaseDatabaseSchemaEditor, tables: Sequence[str]) -> None:
    vendor = schema_editor.connection.vendor
    for table in tables:
        if vendor == "postgresql":
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {_trigger(table)} ON {table}")
        else:
            for operation in ("INSERT", "UPDATE", "DELETE"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {_trigger(table, operation)}")


_READ = f"SELECT number FROM {_TABLE} WHERE id = 1"


def triggers_operation(tables: Sequence[str]) -> RunPython:
    """The migration operation that installs (and, backwards, removes) these triggers."""

    def install(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        triggers_install(schema_editor, tables)

    def remove(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        triggers_remove(schema_editor, tables)

    return RunPython(install, remove)


def triggers_reinstall_operation(tables: Sequence[str]) -> RunPython:
    """The operation that puts these tables' triggers back: the data version's, and the
    publication table's binaries triggers (packages.binaries). SQLite alters a table by
    making a new one and copying the rows, which leaves its triggers behind: a migration
    that alters a table named here is followed by this (harmless on PostgreSQL)."""

    def reinstall(apps: object, schema_editor: BaseDatabaseSchemaEditor) -> None:
        from packages import binaries

        triggers_remove(schema_editor, tables)
        triggers_install(schema_editor, tables)
        if binaries.PUBLICATION_TABLE in tables:
            binaries.triggers_reinstall(schema_editor)

    return RunPython(reinstall, RunPython.noop)


def trigger_names() -> set[str]:
    """The names of the database's own triggers (not the ones PostgreSQL makes for keys)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
        return {row[0] for row in cursor.fetchall()}


def triggers_installed(tables: Sequence[str]) -> dict[str, bool]:
    """Whether each table has every trigger that raises the data version."""
    names = trigger_names()
    if connection.vendor == "postgresql":
        return {table: _trigger(table) in names for table in tables}
    return {
        table: all(_trigger(table, op) in names for op in ("INSERT", "UPDATE", "DELETE"))
        for table in tables
    }


def data_version() -> int:
    """The current data version: one query. 0 before the first write.

    Read on every anonymous page view, before the cache: plain SQL, which costs a third of
    what the ORM spends building the same statement. It is a page's first query, so it
    stands for Django's health check of a connection kept from an earlier request (a
    "SELECT 1" round trip of its own, as long as this read on a cached page): a connection
    the database dropped fails this read instead, and is closed and opened again for one
    more try, as the health check would have done.
    """
    # Django's flag (BaseDatabaseWrapper.health_check_done; not in its type stubs).
    wrapper: Any = connection
    if wrapper.in_atomic_block or wrapper.health_check_done:
        return _read()  # a connection opened or checked in this request: no check due
    wrapper.health_check_done = True
    try:
        return _read()
    except (InterfaceError, OperationalError):
        connection.close()
        return _read()


def _read() -> int:
    with connection.cursor() as cursor:
        cursor.execute(_READ)
        row = cursor.fetchone()
    return int(row[0]) if row else 0
