"""The crash ingest asks whether a machine already reported in an hour (an index on
release, system and time) instead of recounting every report of the hour; it checks no
foreign key per report (it writes ids it has just read), and writes no index that no
read needs (the report's package-and-version index, the counters' single-column ones).

SQLite keeps recounting the hours (overview.evidence.counters), which reads a release's
reports by time: it keeps that index, outside Django's state (PostgreSQL does not need it;
a later migration that rebuilds the table on SQLite must create it again).
"""

import django.db.models.deletion
from django.db import migrations, models

SQLITE_INDEX = "crashreport_release_time_sqlite_idx"


def sqlite_index(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {SQLITE_INDEX} "
            "ON overview_crashreport (release_id, reported_at)"
        )


def sqlite_index_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(f"DROP INDEX IF EXISTS {SQLITE_INDEX}")


class Migration(migrations.Migration):

    dependencies = [
        ('overview', '0019_data_version_triggers_after_merges'),
        ('packages', '0020_data_version_triggers_after_merges'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='crashreport',
            name='crashreport_pkg_version_idx',
        ),
        migrations.RemoveIndex(
            model_name='crashreport',
            name='crashreport_release_time_idx',
        ),
        migrations.AlterField(
            model_name='bucketsystem',
            name='bucket',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='overview.errorbucket'),
        ),
        migrations.AlterField(
            model_name='bucketsystem',
            name='release',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='packages.release'),
        ),
        migrations.AlterField(
            model_name='bucketsystem',
            name='source_package',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='packages.sourcepackage'),
        ),
        migrations.AlterField(
            model_name='crashreport',
            name='bucket',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='reports', to='overview.errorbucket'),
        ),
        migrations.AlterField(
            model_name='crashreport',
            name='release',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='crash_reports', to='packages.release'),
        ),
        migrations.AlterField(
            model_name='crashreport',
            name='source_package',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='crash_reports', to='packages.sourcepackage'),
        ),
        migrations.AlterField(
            model_name='hourlycrashcount',
            name='release',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='packages.release'),
        ),
        migrations.AlterField(
            model_name='hourlycrashcount',
            name='source_package',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='packages.sourcepackage'),
        ),
        migrations.AlterField(
            model_name='versionsighting',
            name='release',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='packages.release'),
        ),
        migrations.AddIndex(
            model_name='crashreport',
            index=models.Index(fields=['release', 'system_id', 'reported_at'], name='crashreport_release_system_idx'),
        ),
        migrations.RunPython(sqlite_index, sqlite_index_drop),
    ]
