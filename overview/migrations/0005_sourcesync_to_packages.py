"""SourceSync now belongs to packages (packages 0006 renamed its table)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("overview", "0004_notification_body_hold_reasons"),
        ("packages", "0006_sourcesync_from_overview"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="SourceSync")],
            database_operations=[],
        )
    ]
