"""Writes to what the public pages show of the evidence raise the data version too."""

from django.db import migrations

from packages.data_version import triggers_operation

# Buckets (problem titles), problems and overrides: the overview's Problems column and
# its halts; assessments: each update's verdict. Crash reports, counters and
# notifications are on no cached page.
TABLES = ("overview_errorbucket", "overview_problem", "overview_override", "overview_assessment")


class Migration(migrations.Migration):
    dependencies = [
        ("overview", "0006_judging"),
        ("packages", "0009_data_version"),
    ]

    operations = [triggers_operation(TABLES)]
