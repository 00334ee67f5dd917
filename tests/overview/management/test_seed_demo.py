"""seed_demo replays the real controller over the simulated archive, and a rerun adds nothing."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from overview.models import CrashReport, Override, Problem
from packages.models import PhasingEvent, PhasingState, Publication

SEED = ("--packages", "150", "--days", "4", "--step-hours", "2", "--baseline-days", "3")


@pytest.mark.django_db
def test_seed_demo_replays_the_controller_and_a_rerun_makes_no_duplicates(
    capsys, archive_admin_user, triager_user
):
    call_command("seed_demo", *SEED)
    assert Publication.objects.filter(state=PhasingState.PHASING).exists()
    assert Publication.objects.filter(state=PhasingState.COMPLETE).exists()
    assert PhasingEvent.objects.filter(kind="advanced").exists()
    # Real regressions halt; false alarms are overridden by the triager and resumed.
    assert Publication.objects.filter(state=PhasingState.HALTED).exists()
    assert Problem.objects.filter(kind="new_bucket").exists()
    # Some updates fail to install on some machines, and halt on it.
    assert Problem.objects.filter(
        bucket__problem_type="package", publication__state=PhasingState.HALTED
    ).exists()
    assert Override.objects.filter(created_by=triager_user).exists()
    assert PhasingEvent.objects.filter(kind="resumed", actor=archive_admin_user).exists()

    counts = (Publication.objects.count(), PhasingEvent.objects.count(), CrashReport.objects.count())
    call_command("seed_demo", *SEED)
    assert (Publication.objects.count(), PhasingEvent.objects.count(), CrashReport.objects.count()) == counts
    assert "up to date" in capsys.readouterr().out
