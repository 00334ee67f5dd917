"""The demo shows dependent updates held together, with the reason on the page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.core.management import call_command

from packages.holds import HoldReason
from packages.models import ACTIVE_STATES, PhasingEvent, Publication
from packages.selectors import dependency_groups
from tests.overview.management.test_seed_demo import SEED

# The simulated world is fixed in time (its anchor), so what the replay holds depends on
# when it ends: at this instant the replay holds a dependent with what it needs.
HELD_TOGETHER_AT = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_the_demo_has_dependent_groups_held_together(anonymous, archive_admin_user):
    with time_machine.travel(HELD_TOGETHER_AT, tick=True):
        call_command("seed_demo", *SEED)

    groups = dependency_groups(policies={})
    assert any(group.needs for group in groups.values())
    # The controller held a dependent with what it needs, at some tick of the replay: it
    # either holds one now, or advanced one only as far as what it needs.
    held_now = Publication.objects.filter(
        state__in=ACTIVE_STATES, hold_reason=HoldReason.DEPENDENCY
    )
    capped = PhasingEvent.objects.filter(reason__contains="held with")
    assert held_now.exists() or capped.exists()
    assert "Updates held together." in anonymous.get("/").content.decode()
    for publication in held_now:
        page = anonymous.get(publication.get_absolute_url()).content.decode()
        assert publication.hold_words in page.replace("&#x27;", "'").replace("&gt;", ">")
