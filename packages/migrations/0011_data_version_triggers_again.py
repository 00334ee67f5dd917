"""The data version's triggers back on the tables 0010 altered: SQLite rebuilt them
without their triggers, so the embedded default's pages stayed cached after a freeze or a
policy change."""

from django.db import migrations

from packages.data_version import triggers_reinstall_operation

TABLES = (
    "packages_release",
    "packages_sourcepackage",
    "packages_policy",
    "packages_publication",
    "packages_phasingevent",
    "packages_sourcesync",
)


class Migration(migrations.Migration):
    dependencies = [("packages", "0010_hardening_bounds_leases_release_events")]

    operations = [triggers_reinstall_operation(TABLES)]
