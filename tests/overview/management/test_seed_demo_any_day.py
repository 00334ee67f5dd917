"""The demo seeds and the controller ticks the same way whatever day and hour they run:
no test depends on the day it runs, and neither does the product's replay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.management import call_command

from overview.controller import tick as controller
from packages.models import ACTIVE_STATES, PhasingEvent, Publication

SMALL = ("--packages", "60", "--days", "2", "--step-hours", "6", "--baseline-days", "2")

AWKWARD_INSTANTS = {
    "a Friday evening": datetime(2026, 12, 4, 19, 30, tzinfo=UTC),
    "a Sunday": datetime(2026, 12, 6, 11, 0, tzinfo=UTC),
    "a month's end": datetime(2026, 11, 30, 23, 50, tzinfo=UTC),
    "just after midnight": datetime(2026, 12, 8, 0, 3, tzinfo=UTC),
}


@pytest.mark.django_db
@pytest.mark.parametrize("instant", AWKWARD_INSTANTS.values(), ids=AWKWARD_INSTANTS.keys())
def test_the_demo_seeds_and_ticks_at_any_instant(instant, anonymous, archive_admin_user):
    with time_machine.travel(instant, tick=False):
        call_command("seed_demo", *SMALL)
        assert Publication.objects.filter(state__in=ACTIVE_STATES).exists()
        assert PhasingEvent.objects.filter(kind="advanced").exists()

        controller.tick(now=instant)
        events = PhasingEvent.objects.count()
        # A second tick at the same instant decides nothing new.
        controller.tick(now=instant)
        assert PhasingEvent.objects.count() == events

        # Six hours later the controller goes on by its policy: nothing breaks on the turn
        # of a day, a week or a month.
        later = instant + timedelta(hours=6)
        with time_machine.travel(later, tick=False):
            controller.tick(now=later)
            page = anonymous.get("/")
            shown = Publication.objects.filter(state__in=ACTIVE_STATES).first()
        assert page.status_code == 200
        assert shown is not None and shown.source_package.name in page.content.decode()
