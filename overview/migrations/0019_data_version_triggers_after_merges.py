# SQLite rebuilds a table it alters without its triggers: this round's migrations altered
# the evidence's tables, so their data-version triggers go back on.

from django.db import migrations

from packages.data_version import triggers_reinstall_operation

TABLES = ("overview_errorbucket", "overview_problem", "overview_override", "overview_assessment")


class Migration(migrations.Migration):
    dependencies = [
        ("overview", "0018_notification_named_outbox"),
        ("packages", "0020_data_version_triggers_after_merges"),
    ]

    operations = [triggers_reinstall_operation(TABLES)]
