"""The dependents' crash counts (DependentCrashCount), recounted from the stored reports of
the hours a batch touched, beside the other judging counters (overview.evidence.counters).

For each update in phasing, paused or halted in -updates, the crash reports of *other*
packages that list one of its binaries at its new version or at the one it replaces
(apport's dependency versions) are counted per dependent, dependent version and hour, a
machine once per bucket and hour. The updates' binaries are joined by name (a hash join),
never each report against each publication. One statement; PostgreSQL's and SQLite's SQL.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, models
from django.db.backends.utils import CursorWrapper

from overview.models import CrashReport, DependentCrashCount
from packages.models import ACTIVE_STATES, Pocket, Publication

COUNTED = "NOT r.automated_testing AND NOT r.from_proposed"


def _table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _states() -> str:
    return ", ".join(f"'{state}'" for state in ACTIVE_STATES)


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
        "p.version, p.previous_version, b.name "
        f"FROM {_table(Publication)} p "
        "CROSS JOIN LATERAL jsonb_array_elements_text("
        "CASE jsonb_typeof(p.binaries) WHEN 'array' THEN p.binaries ELSE '[]'::jsonb END) "
        "AS b(name) "
        f"WHERE p.state IN ({_states()}) AND p.pocket = '{Pocket.UPDATES.value}' "
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
    cursor.execute(
        "WITH lib AS (SELECT p.id, p.release_id, p.source_package_id, p.version, "
        "p.previous_version, b.value AS name "
        f"FROM {_table(Publication)} p, json_each(CASE WHEN json_valid(p.binaries) "
        "AND json_type(p.binaries) = 'array' THEN p.binaries ELSE '[]' END) AS b "
        f"WHERE p.state IN ({_states()}) AND p.pocket = '{Pocket.UPDATES.value}' "
        "AND p.previous_version <> '') "
        f"INSERT INTO {_table(DependentCrashCount)} "
        "(library_id, dependent_id, dependent_version, hour, on_new, on_old) "
        "SELECT lib.id, r.source_package_id, substr(r.version, 1, 200), k.hour, "
        "count(DISTINCT CASE WHEN v.value = lib.version "
        "THEN r.system_id || ':' || r.bucket_id END), "
        "count(DISTINCT CASE WHEN v.value = lib.previous_version "
        "THEN r.system_id || ':' || r.bucket_id END) "
        f"FROM judging_keys k JOIN {_table(CrashReport)} r ON r.release_id = k.release_id "
        "AND r.source_package_id = k.source_package_id AND r.version = k.version "
        f"AND r.reported_at >= k.hour AND r.reported_at < k.hour_end AND {COUNTED} "
        "JOIN json_each(CASE WHEN json_valid(r.package_versions) "
        "AND json_type(r.package_versions) = 'object' THEN r.package_versions "
        "ELSE '{}' END) AS v "
        "JOIN lib ON lib.release_id = r.release_id AND lib.name = v.key "
        "AND lib.source_package_id <> r.source_package_id "
        "AND v.value IN (lib.version, lib.previous_version) "
        "WHERE v.type = 'text' "
        "GROUP BY lib.id, r.source_package_id, substr(r.version, 1, 200), k.hour "
        "ON CONFLICT (library_id, hour, dependent_id, dependent_version) "
        "DO UPDATE SET on_new = excluded.on_new, on_old = excluded.on_old "
        "WHERE on_new <> excluded.on_new OR on_old <> excluded.on_old"
    )
