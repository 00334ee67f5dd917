"""Pending scheduled changes on the public pages: the overview lists them all, the
history page those that touch its package; done and cancelled ones are gone from both."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.models import ScheduledAction, ScheduledState
from tests.factories import (
    NOW,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]


@pytest.fixture
def changes(publication):
    other = PublicationFactory(source_package=SourcePackageFactory(name="other"))
    return {
        "pause": ScheduledChangeFactory(publication=publication, reason="hold for the weekend"),
        "set": ScheduledChangeFactory(
            action=ScheduledAction.SET,
            publication=publication,
            percentage=50,
            run_at=NOW + timedelta(days=1),
            reason="faster",
        ),
        "freeze": ScheduledChangeFactory(
            action=ScheduledAction.FREEZE,
            publication=None,
            release=publication.release,
            reason="archive maintenance",
        ),
        "other": ScheduledChangeFactory(publication=other, reason="the other package"),
        "elsewhere": ScheduledChangeFactory(
            action=ScheduledAction.FREEZE,
            publication=None,
            release=ReleaseFactory(codename="jammy", version="22.04"),
            reason="jammy maintenance",
        ),
        "done": ScheduledChangeFactory(
            publication=publication, state=ScheduledState.DONE, reason="already ran"
        ),
        "cancelled": ScheduledChangeFactory(
            publication=publication, state=ScheduledState.CANCELLED, reason="called off"
        ),
    }


def test_the_overview_lists_every_pending_change_with_when_who_and_why(anonymous, changes):
    html = anonymous.get("/").content.decode()

    assert "Scheduled changes" in html
    for reason in ("hold for the weekend", "faster", "archive maintenance", "the other package"):
        assert reason in html
    assert "Set percentage to 50%" in html
    assert "release noble" in html
    assert "2026-12-03 13:00 UTC" in html
    assert "an archive admin" in html and "scheduler" not in html  # never a login name
    assert "already ran" not in html and "called off" not in html


def test_the_history_page_lists_the_pending_changes_of_its_package_and_releases(anonymous, changes):
    html = anonymous.get("/source/tool/").content.decode()

    assert "hold for the weekend" in html
    assert "archive maintenance" in html  # its release's freeze
    assert "the other package" not in html
    assert "jammy maintenance" not in html  # a release it is not published in
    assert "already ran" not in html and "called off" not in html


def test_without_pending_changes_the_pages_say_nothing_of_them(anonymous, publication):
    assert "Scheduled changes" not in anonymous.get("/").content.decode()
    assert "Scheduled changes" not in anonymous.get("/source/tool/").content.decode()
