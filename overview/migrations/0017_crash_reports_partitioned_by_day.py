"""Crash reports partitioned by UTC day, on PostgreSQL only (overview.evidence.partitions).

PostgreSQL's unique keys on a partitioned table must hold the partition key, so the
primary key becomes (id, reported_at) and a report's identity (external_id, reported_at):
the error tracker sends a report again with its own time, so a copy still meets its first
one. The id keeps its sequence and stays unique. Django's model is unchanged (its state
is that of SQLite, where the table stays plain).
"""

from django.db import migrations

from overview.evidence.partitions import create_sql, default_sql

TABLE = "overview_crashreport"
NEW = f"{TABLE}_partitioned"
SEQUENCE = f"{TABLE}_id_seq"


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    run = schema_editor.execute
    run(f"CREATE SEQUENCE {NEW}_id_seq")
    run(f"CREATE TABLE {NEW} (LIKE {TABLE} INCLUDING DEFAULTS) PARTITION BY RANGE (reported_at)")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT (reported_at AT TIME ZONE 'UTC')::date FROM {TABLE} ORDER BY 1"
        )
        days = [row[0] for row in cursor.fetchall()]
    for day in days:
        run(create_sql(day).replace(f"PARTITION OF {TABLE} ", f"PARTITION OF {NEW} "))
    run(default_sql().replace(f"PARTITION OF {TABLE} ", f"PARTITION OF {NEW} "))
    run(f"INSERT INTO {NEW} SELECT * FROM {TABLE}")
    run(f"SELECT setval('{NEW}_id_seq', COALESCE((SELECT max(id) FROM {TABLE}), 0) + 1, false)")
    run(f"DROP TABLE {TABLE}")
    run(f"ALTER TABLE {NEW} RENAME TO {TABLE}")
    run(f"ALTER SEQUENCE {NEW}_id_seq RENAME TO {SEQUENCE}")
    run(f"ALTER SEQUENCE {SEQUENCE} OWNED BY {TABLE}.id")
    run(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT nextval('{SEQUENCE}')")
    run(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY (id, reported_at)")
    run(
        f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_external_id_key "
        "UNIQUE (external_id, reported_at)"
    )
    for column, target in (
        ("bucket_id", "overview_errorbucket"),
        ("source_package_id", "packages_sourcepackage"),
        ("release_id", "packages_release"),
    ):
        run(
            f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_{column}_fk FOREIGN KEY ({column}) "
            f"REFERENCES {target} (id) DEFERRABLE INITIALLY DEFERRED"
        )
    # The model's indexes, by their names (see CrashReport.Meta.indexes).
    run(f"CREATE INDEX crashreport_bucket_time_idx ON {TABLE} (bucket_id, reported_at DESC)")
    run(
        f"CREATE INDEX crashreport_pkg_version_idx ON {TABLE} "
        "(source_package_id, version, bucket_id, release_id, system_id)"
    )
    run(f"CREATE INDEX crashreport_release_time_idx ON {TABLE} (release_id, reported_at)")


class Migration(migrations.Migration):
    dependencies = [("overview", "0016_bucket_systems_and_report_spans")]

    # Not reversible in place: going back means loading the reports into a plain table.
    operations = [migrations.RunPython(partition, migrations.RunPython.noop, elidable=False)]
