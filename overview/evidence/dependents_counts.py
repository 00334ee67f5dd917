"""The dependents' crash counts (DependentCrashCount), beside the other judging counters.

For each update in phasing, paused or halted in -updates, the crash reports of *other*
packages that list one of its binaries at its new version or at the one it replaces
(apport's dependency versions) are counted per dependent, dependent version and hour, a
machine once per bucket and hour. The updates' binaries are joined by name (a hash join),
never each report against each publication.

On PostgreSQL the ingest adds to the counts (`new_counted_postgresql` before a batch is
stored, `add_postgresql` after), as it adds to the hourly crash counts: an incoming report
counts for a library only if no stored report of its machine, bucket, dependent version
and hour already lists the library at that version (an index probe), so a batch costs
what it brings, not what its hours already hold. Recounting the hours a batch touched
read every stored report of those hours with its dependencies again, and at archive
scale (a popular dependent's hour holds thousands) took a minute a batch. The recount
stays for SQLite's ingest and for overview.evidence.counters' recount of chosen hours.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, models
from django.db.backends.utils import CursorWrapper

from overview.models import CrashReport, DependentCrashCount
from packages.models import ACTIVE_STATES, Pocket, Publication, SourcePackageBinary

COUNTED = "NOT r.automated_testing AND NOT r.from_proposed"


def _table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _states() -> str:
    return ", ".join(f"'{state}'" for state in ACTIVE_STATES)


def _libraries_postgresql(packages: str) -> str:
    """SQL: lib(id, release_id, source_package_id, version, previous_version, names, name),
    one row per binary of each update in phasing of the source packages that the query
    `packages` gives (a column source_package_id, each package once); `names`: all of that
    update's binaries. A binary's name is a JSON string of `binaries`, as in
    SourcePackageBinary."""
    return (
        # Each package's publications by an index probe on the package (a LATERAL subquery,
        # kept whole by OFFSET 0 so that the state is tested on its rows), then those in
        # phasing. Joined as sets, or probed by package and state, the planner, misjudging
        # how many updates are in phasing while a sync moves them (8 for 29,634), compared
        # each package with each update: 99 M pairs and 10 s a batch in an archive of
        # 20,000 updates in phasing.
        "pubs AS MATERIALIZED (SELECT p.id, p.release_id, p.source_package_id, p.version, "
        "p.previous_version, ARRAY(SELECT b.value #>> '{}' FROM jsonb_array_elements("
        "CASE jsonb_typeof(p.binaries) WHEN 'array' THEN p.binaries ELSE '[]'::jsonb END) "
        f"AS b WHERE jsonb_typeof(b.value) = 'string') AS names FROM ({packages}) AS k "
        "CROSS JOIN LATERAL (SELECT id, release_id, source_package_id, version, "
        f"previous_version, binaries, state, pocket FROM {_table(Publication)} "
        f"WHERE source_package_id = k.source_package_id AND state IN ({_states()}) "
        "OFFSET 0) AS p "
        f"WHERE p.pocket = '{Pocket.UPDATES.value}' AND p.previous_version <> ''), "
        "lib AS MATERIALIZED (SELECT pubs.*, n.name FROM pubs "
        "CROSS JOIN LATERAL unnest(pubs.names) AS n(name))"
    )


def new_counted_postgresql(cursor: CursorWrapper, *, hour: str, probe: str) -> None:
    """What the incoming reports (the scratch table incoming_crash_report) add to the
    dependents' counts, asked before they are stored, into the scratch table
    new_dependent_count. `hour`: SQL for a report i's hour; `probe`: the clause that keeps
    a NOT EXISTS subquery an index probe (overview.evidence.ingest_sql)."""
    cursor.execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS new_dependent_count (library_id bigint, "
        "dependent_id bigint, dependent_version text, hour timestamptz, on_new int, "
        "on_old int)"
    )
    cursor.execute("TRUNCATE new_dependent_count")
    cursor.execute(
        # The batch's dependencies first; then the only updates that can count them: those
        # of packages building a listed binary, other than the listing report's package
        # (an index probe per name into SourcePackageBinary). Reading every update in
        # phasing instead cost a third of the ingest in an archive of 20,000 updates, and
        # most names a report lists are its own package's.
        "WITH deps AS MATERIALIZED (SELECT i.release_id, i.source_package_id, i.version, "
        f"{hour} AS hour, i.bucket_id, i.system_id, i.repeat, v.key, v.value "
        "FROM incoming_crash_report i CROSS JOIN LATERAL jsonb_each_text("
        "CASE jsonb_typeof(i.package_versions) WHEN 'object' THEN i.package_versions "
        f"ELSE '{{}}'::jsonb END) AS v WHERE {COUNTED.replace('r.', 'i.')}), "
        "owners AS MATERIALIZED (SELECT DISTINCT o.source_package_id "
        "FROM (SELECT DISTINCT key, source_package_id FROM deps) d "
        f"JOIN {_table(SourcePackageBinary)} o ON o.name = d.key "
        "AND o.source_package_id <> d.source_package_id), "
        f"{_libraries_postgresql('SELECT source_package_id FROM owners')}, "
        # Then a hash join on the binary's name (materialised: left to itself the planner,
        # which cannot estimate a JSON object's size, paired every report with every
        # update of its release before looking at the names). The machines' crashes in
        # this batch that list a library at one of its two versions, a machine once per
        # bucket, dependent version, hour and library version.
        "inc AS MATERIALIZED (SELECT DISTINCT d.release_id, d.source_package_id, d.version, "
        "d.hour, d.bucket_id, d.system_id, d.repeat, lib.id AS library_id, "
        "d.value AS library_version, d.value = lib.version AS on_new, lib.names "
        "FROM deps d JOIN lib ON lib.release_id = d.release_id AND lib.name = d.key "
        "AND lib.source_package_id <> d.source_package_id "
        "AND d.value IN (lib.version, lib.previous_version)) "
        "INSERT INTO new_dependent_count SELECT library_id, source_package_id, "
        "left(version, 200), hour, count(*) FILTER (WHERE on_new), "
        "count(*) FILTER (WHERE NOT on_new) FROM inc "
        f"WHERE NOT inc.repeat OR NOT EXISTS (SELECT 1 FROM {_table(CrashReport)} r "
        "WHERE r.release_id = inc.release_id AND r.system_id = inc.system_id "
        "AND r.reported_at >= inc.hour AND r.reported_at < inc.hour + interval '1 hour' "
        f"AND {COUNTED} AND r.source_package_id = inc.source_package_id "
        "AND r.version = inc.version AND r.bucket_id = inc.bucket_id "
        "AND EXISTS (SELECT 1 FROM unnest(inc.names) AS n(name) "
        f"WHERE r.package_versions ->> n.name = inc.library_version) {probe}) "
        "GROUP BY library_id, source_package_id, left(version, 200), hour"
    )


def add_postgresql(cursor: CursorWrapper) -> None:
    """Add what `new_counted_postgresql` found to the counts, once the batch is stored."""
    cursor.execute(
        f"INSERT INTO {_table(DependentCrashCount)} AS d "
        "(library_id, dependent_id, dependent_version, hour, on_new, on_old) "
        "SELECT library_id, dependent_id, dependent_version, hour, on_new, on_old "
        "FROM new_dependent_count "
        "ON CONFLICT (library_id, hour, dependent_id, dependent_version) "
        "DO UPDATE SET on_new = d.on_new + EXCLUDED.on_new, on_old = d.on_old + EXCLUDED.on_old"
    )


def recount_postgresql(cursor: CursorWrapper, keys: str, params: list[Any]) -> None:
    """Recount for the FROM item `keys`: k(release_id, source_package_id, version, hour),
    the dependents' versions and hours a batch touched (not every report of those hours:
    a dependent's count changes only with its own reports)."""
    # Both steps materialised: left to itself the planner (which cannot estimate a JSON
    # array's length) paired every touched key with every update before finding the
    # reports, one index scan per pair. The reports' dependencies first, kept to the
    # updates' binaries; then a hash join on the binary's name.
    cursor.execute(
        "WITH lib AS MATERIALIZED (SELECT p.id, p.release_id, p.source_package_id, "
        "p.version, p.previous_version, b.value #>> '{}' AS name "
        f"FROM {_table(Publication)} p "
        "CROSS JOIN LATERAL jsonb_array_elements("
        "CASE jsonb_typeof(p.binaries) WHEN 'array' THEN p.binaries ELSE '[]'::jsonb END) "
        "AS b WHERE jsonb_typeof(b.value) = 'string' "
        f"AND p.state IN ({_states()}) AND p.pocket = '{Pocket.UPDATES.value}' "
        "AND p.previous_version <> ''), "
        "deps AS MATERIALIZED (SELECT r.release_id, r.source_package_id, "
        "left(r.version, 200) AS version, k.hour, r.system_id, r.bucket_id, v.key, v.value "
        f"FROM {keys} "
        f"JOIN {_table(CrashReport)} r ON r.release_id = k.release_id "
        "AND r.source_package_id = k.source_package_id AND r.version = k.version "
        "AND r.reported_at >= k.hour AND r.reported_at < k.hour + interval '1 hour' "
        f"AND {COUNTED} "
        "CROSS JOIN LATERAL jsonb_each_text("
        "CASE jsonb_typeof(r.package_versions) WHEN 'object' THEN r.package_versions "
        "ELSE '{}'::jsonb END) AS v "
        "WHERE v.key IN (SELECT name FROM lib)) "
        f"INSERT INTO {_table(DependentCrashCount)} AS d "
        "(library_id, dependent_id, dependent_version, hour, on_new, on_old) "
        "SELECT lib.id, deps.source_package_id, deps.version, deps.hour, "
        "count(DISTINCT (deps.system_id, deps.bucket_id)) "
        "FILTER (WHERE deps.value = lib.version), "
        "count(DISTINCT (deps.system_id, deps.bucket_id)) "
        "FILTER (WHERE deps.value = lib.previous_version) "
        "FROM deps JOIN lib ON lib.release_id = deps.release_id AND lib.name = deps.key "
        "AND lib.source_package_id <> deps.source_package_id "
        "AND deps.value IN (lib.version, lib.previous_version) "
        "GROUP BY lib.id, deps.source_package_id, deps.version, deps.hour "
        "ON CONFLICT (library_id, hour, dependent_id, dependent_version) "
        "DO UPDATE SET on_new = EXCLUDED.on_new, on_old = EXCLUDED.on_old "
        "WHERE (d.on_new, d.on_old) IS DISTINCT FROM (EXCLUDED.on_new, EXCLUDED.on_old)",
        params,
    )


def recount_sqlite(cursor: CursorWrapper) -> None:
    """The same in SQLite's SQL, for the keys of the scratch table judging_keys
    (release_id, source_package_id, version, hour, hour_end) that
    overview.evidence.counters fills."""
    # The updates' binaries go into a scratch table indexed by release and name, and the
    # join is read in the order written (CROSS JOIN: SQLite keeps it): from the keys to
    # their reports, their dependencies, then one index probe for the library. Left to
    # itself, SQLite started from the updates' binaries and read, for each, every report
    # of its release: a recount cost updates × reports, and a backtest of 300 updates
    # slowed hour after hour as the reports piled up.
    cursor.execute(
        "CREATE TEMP TABLE IF NOT EXISTS judging_libraries "
        "(id integer, release_id integer, source_package_id integer, version text, "
        "previous_version text, name text)"
    )
    cursor.execute(
        "CREATE INDEX IF NOT EXISTS judging_libraries_by_name "
        "ON judging_libraries (release_id, name)"
    )
    cursor.execute("DELETE FROM judging_libraries")
    cursor.execute(
        "INSERT INTO judging_libraries SELECT p.id, p.release_id, p.source_package_id, "
        "p.version, p.previous_version, b.value "
        f"FROM {_table(Publication)} p, json_each(CASE WHEN json_valid(p.binaries) "
        "AND json_type(p.binaries) = 'array' THEN p.binaries ELSE '[]' END) AS b "
        f"WHERE b.type = 'text' AND p.state IN ({_states()}) AND p.pocket = '{Pocket.UPDATES.value}' "
        "AND p.previous_version <> ''"
    )
    cursor.execute(
        f"INSERT INTO {_table(DependentCrashCount)} "
        "(library_id, dependent_id, dependent_version, hour, on_new, on_old) "
        "SELECT lib.id, r.source_package_id, substr(r.version, 1, 200), k.hour, "
        "count(DISTINCT CASE WHEN v.value = lib.version "
        "THEN r.system_id || ':' || r.bucket_id END), "
        "count(DISTINCT CASE WHEN v.value = lib.previous_version "
        "THEN r.system_id || ':' || r.bucket_id END) "
        f"FROM judging_keys k CROSS JOIN {_table(CrashReport)} r "
        "ON r.release_id = k.release_id "
        "AND r.source_package_id = k.source_package_id AND r.version = k.version "
        f"AND r.reported_at >= k.hour AND r.reported_at < k.hour_end AND {COUNTED} "
        "CROSS JOIN json_each(CASE WHEN json_valid(r.package_versions) "
        "AND json_type(r.package_versions) = 'object' THEN r.package_versions "
        "ELSE '{}' END) AS v "
        "CROSS JOIN judging_libraries lib ON lib.release_id = r.release_id AND lib.name = v.key "
        "AND lib.source_package_id <> r.source_package_id "
        "AND v.value IN (lib.version, lib.previous_version) "
        "WHERE v.type = 'text' "
        "GROUP BY lib.id, r.source_package_id, substr(r.version, 1, 200), k.hour "
        "ON CONFLICT (library_id, hour, dependent_id, dependent_version) "
        "DO UPDATE SET on_new = excluded.on_new, on_old = excluded.on_old "
        "WHERE on_new <> excluded.on_new OR on_old <> excluded.on_old"
    )
