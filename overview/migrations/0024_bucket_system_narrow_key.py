"""BucketSystem's unique key becomes the bucket and one number (models.system_key): the
ingest inserts a batch's systems at random places in that index, and the five columns
made it larger than the table."""

from django.db import migrations, models

FILL = 5000


def fill_keys(apps, schema_editor):
    from overview.models.evidence import SYSTEM_KEY_SQL, system_key

    table = schema_editor.quote_name("overview_bucketsystem")
    if schema_editor.connection.vendor == "postgresql":
        # A change of type rewrites the table in one pass; an UPDATE would leave every
        # row's old version behind, doubling a table of millions of rows.
        schema_editor.execute(
            f"ALTER TABLE {table} ALTER COLUMN key TYPE bigint USING {SYSTEM_KEY_SQL}"
        )
        return
    BucketSystem = apps.get_model("overview", "BucketSystem")
    rows = BucketSystem.objects.values_list(
        "id", "release_id", "source_package_id", "version", "system_id"
    )
    batch = []
    for pk, *fields in rows.iterator(chunk_size=FILL):
        batch.append(BucketSystem(id=pk, key=system_key(*fields)))
        if len(batch) == FILL:
            BucketSystem.objects.bulk_update(batch, ["key"])
            batch = []
    BucketSystem.objects.bulk_update(batch, ["key"])


class Migration(migrations.Migration):
    dependencies = [("overview", "0023_counters_fillfactor")]

    operations = [
        migrations.AddField(
            model_name="bucketsystem", name="key", field=models.BigIntegerField(null=True)
        ),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="bucketsystem", name="key", field=models.BigIntegerField()
        ),
        migrations.RemoveConstraint(
            model_name="bucketsystem", name="one_system_per_bucket_version"
        ),
        migrations.AddConstraint(
            model_name="bucketsystem",
            constraint=models.UniqueConstraint(
                fields=("bucket", "key"), name="one_system_key_per_bucket"
            ),
        ),
    ]
