from django.db import migrations

# The counters the crash ingest adds to, batch after batch (ON CONFLICT DO UPDATE). With
# room left on each page, PostgreSQL writes the new version of a row beside the old one
# and no index needs a new entry (a HOT update): the ingest's upserts cost less and the
# indexes stop growing with every batch. Pages written from now on keep the room; a
# deployment that wants its existing pages rewritten can VACUUM FULL these tables.
COUNTERS = (
    "overview_bucketversionstat",
    "overview_crashcounter",
    "overview_hourlycrashcount",
    "overview_versionsighting",
    "overview_dependentcrashcount",
)


def fillfactor(value: int):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return  # SQLite has no fillfactor
        for table in COUNTERS:
            schema_editor.execute(
                f"ALTER TABLE {schema_editor.quote_name(table)} SET (fillfactor = {value})"
            )

    return apply


class Migration(migrations.Migration):
    dependencies = [("overview", "0022_bucket_system_key_by_bucket")]

    operations = [migrations.RunPython(fillfactor(75), fillfactor(100))]
