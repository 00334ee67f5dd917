# SQLite rebuilds a table it alters without its triggers: this round's migrations altered
# publications, policies and scheduled changes, so their data-version triggers go back on.

from django.db import migrations

from packages.data_version import triggers_reinstall_operation

TABLES = (
    "packages_release",
    "packages_sourcepackage",
    "packages_policy",
    "packages_publication",
    "packages_phasingevent",
    "packages_sourcesync",
    "packages_scheduledchange",
)


class Migration(migrations.Migration):
    dependencies = [
        ("packages", "0019_scheduled_change_cancelled_event"),
    ]

    operations = [triggers_reinstall_operation(TABLES)]
