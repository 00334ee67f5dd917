"""The Launchpad bugs each upload closes (its changelog's "LP: #N"), linked on the pages.
The publication table carries the data version's triggers, which SQLite drops when it
rebuilds an altered table: they are put back."""

from django.db import migrations, models

from packages.data_version import triggers_reinstall_operation


class Migration(migrations.Migration):
    dependencies = [("packages", "0013_scheduled_changes")]

    operations = [
        migrations.AddField(
            model_name="publication",
            name="closed_bugs",
            field=models.JSONField(blank=True, default=list),
        ),
        triggers_reinstall_operation(("packages_publication",)),
    ]
