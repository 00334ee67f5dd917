"""The data version's triggers back on overrides, which 0009 altered (SQLite rebuilt the
table without them)."""

from django.db import migrations

from packages.data_version import triggers_reinstall_operation


class Migration(migrations.Migration):
    dependencies = [
        ("overview", "0009_email_claims_and_version_checks"),
        ("packages", "0011_data_version_triggers_again"),
    ]

    operations = [triggers_reinstall_operation(("overview_override",))]
