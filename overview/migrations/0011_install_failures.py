"""Buckets say what they hold: crashes, or package install failures (apport's
ProblemType: Package). The bucket table carries the data version's triggers, which SQLite
drops when it rebuilds an altered table: they are put back."""

from django.db import migrations, models

from packages.data_version import triggers_reinstall_operation


class Migration(migrations.Migration):
    dependencies = [("overview", "0010_data_version_triggers_again")]

    operations = [
        migrations.AddField(
            model_name="errorbucket",
            name="problem_type",
            field=models.CharField(
                choices=[("crash", "crash"), ("package", "install failure")],
                default="crash",
                max_length=10,
            ),
        ),
        triggers_reinstall_operation(("overview_errorbucket",)),
    ]
