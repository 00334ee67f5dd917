"""No silent fallback: when the sequential test fails for an update whose policy chose it,
the update holds with the error shown and counts in /metrics; Ubuntu's rate rule never
stands in for it, and the other updates of the tick are judged as usual."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from overview.evidence.ingest import crash_reports_ingest
from overview.judges import pipeline as judging
from overview.models import Problem
from packages.domain.policy import UBUNTU
from packages.holds import HoldReason
from packages.models import PhasingState
from tests.factories import PolicyFactory, PublicationFactory, SourcePackageFactory
from tests.overview.judges.test_pipeline import HOUR, T0, crashes, tick, update

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

TOKEN = "scrape-token-0123456789"


@pytest.fixture
def broken_for_tool(monkeypatch):
    """The sequential test raises for the package "tool" only."""
    judge = judging.publications_judge

    def failing(publications, *, now):
        if any(p.source_package.name == "tool" for p in publications):
            raise ZeroDivisionError("float division by zero")
        return judge(publications, now=now)

    monkeypatch.setattr(judging, "publications_judge", failing)


def test_a_failing_sequential_test_holds_the_update_with_its_error_not_ubuntus_rule(
    broken_for_tool,
):
    publication = update()
    # Three times the crashes: Ubuntu's rule would halt it (no crash day of the
    # previous version before publication makes any crash today a rise).
    crash_reports_ingest(crashes(ratio=3.0, per_hour=12))

    [decision] = tick()

    publication.refresh_from_db()
    assert (decision.action, publication.state) == ("hold", PhasingState.PHASING)
    assert publication.phased_update_percentage == 50
    assert publication.hold_reason == HoldReason.JUDGE_FAILED
    assert "ZeroDivisionError: float division by zero" in publication.hold_detail
    assert not Problem.objects.filter(publication=publication).exists()


def test_one_update_the_test_fails_for_holds_alone_and_the_others_are_judged(broken_for_tool):
    broken = update()
    other = PublicationFactory(
        source_package=SourcePackageFactory(name="other"),
        version="1.1-1",
        previous_version="1.0-1",
        date_published=T0 - 24 * HOUR,
        last_increase_at=T0 - 24 * HOUR,
        phased_update_percentage=10,
    )

    tick()

    broken.refresh_from_db()
    other.refresh_from_db()
    assert broken.hold_reason == HoldReason.JUDGE_FAILED
    assert other.hold_reason != HoldReason.JUDGE_FAILED
    assert other.phased_update_percentage > 10


def test_under_ubuntus_rules_a_failing_sequential_test_changes_nothing(broken_for_tool):
    publication = update()
    PolicyFactory(source_package=publication.source_package, judge=UBUNTU)
    crash_reports_ingest(crashes(ratio=3.0, per_hour=12))

    tick()

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED  # Ubuntu's own rule, which it chose


@override_settings(PHASING_METRICS_TOKEN=TOKEN)
def test_updates_held_by_a_failed_judge_count_in_the_metrics(broken_for_tool):
    update()
    tick()

    text = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}").get("/metrics").content.decode()
    assert 'phasing_held_updates{reason="judge_failed",release="noble"} 1.0' in text
