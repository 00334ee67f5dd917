"""What needs a person, at the top of the overview: each kind with its next action."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.holds import HoldReason
from packages.models import EventKind, PhasingState
from packages.services.scheduled import AWAITING_SIGN_OFF
from tests.factories import (
    NOW,
    PhasingEventFactory,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]


def _attention(client) -> str:
    html = client.get("/").content.decode()
    return html[html.index('<section class="attention"') : html.index("</section>")]


def test_a_halt_by_the_controller_says_its_problem_in_a_few_words_and_links_its_page(anonymous):
    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="mutter"),
        state=PhasingState.HALTED,
        phased_update_percentage=0,
    )
    PhasingEventFactory(
        publication=publication,
        kind=EventKind.HALTED,
        new_state=PhasingState.HALTED,
        new_percentage=0,
        reason="new problem: clutter_actor_paint " + "with a very long signature " * 10,
        created_at=NOW - timedelta(hours=2),
    )

    section = _attention(anonymous)

    assert "Halted" in section and "mutter" in section
    assert "new problem: clutter_actor_paint with a very long" in section
    assert "…" in section  # a few words, not the whole signature
    assert "2 h ago" in section
    assert f'href="/updates/{publication.pk}/">Review the problem' in section


def test_a_halt_by_a_person_says_who(anonymous):
    publication = PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)
    PhasingEventFactory(
        publication=publication,
        kind=EventKind.HALTED,
        new_state=PhasingState.HALTED,
        actor=UserFactory(username="ada"),
        actor_name="ada",
        reason="regression report",
    )

    assert "by ada: regression report" in _attention(anonymous)


def test_an_update_held_for_missing_crash_data_says_since_when_and_links_the_sources(anonymous):
    PublicationFactory(
        hold_reason=HoldReason.CRASH_DATA_UNAVAILABLE,
        crash_data_unavailable_since=NOW - timedelta(hours=2),
    )
    PublicationFactory(hold_reason=HoldReason.NOT_ENOUGH_DATA)  # the normal start: no person

    section = _attention(anonymous)

    assert "Held for data <span" in section and section.count("<li>") == 1
    assert "since 2026-12-03 10:00 UTC" in section
    assert 'href="/sources/">Check the crash source' in section


def test_a_change_waiting_for_a_sign_off_says_who_asked_and_why(anonymous):
    publication = PublicationFactory(source_package=SourcePackageFactory(name="systemd"))
    ScheduledChangeFactory(
        publication=publication,
        action="release",
        run_at=NOW,
        created_by=UserFactory(username="ada-login", first_name="Ada", last_name="Byron"),
        reason="fixes the boot hang",
        outcome=AWAITING_SIGN_OFF,
    )
    ScheduledChangeFactory(publication=publication)  # scheduled, no sign-off needed

    section = _attention(anonymous)

    assert "Waiting for a sign-off" in section and section.count("<li>") == 1
    assert (
        "Release to everyone systemd" in section
        and "asked by Ada Byron: fixes the boot hang" in section
    )
    assert "ada-login" not in section  # a login name never goes out on a public page


def test_an_archive_holding_another_percentage_than_written_is_a_disagreement(anonymous):
    PublicationFactory(
        phased_update_percentage=50,
        written_percentage=50,
        written_at=NOW - timedelta(hours=1),
        synced_at=NOW - timedelta(minutes=10),
        source_percentage=30,
        source_name="launchpad",
    )
    PublicationFactory(  # not read back since the write: no disagreement yet
        written_percentage=50,
        written_at=NOW - timedelta(minutes=5),
        synced_at=NOW - timedelta(minutes=10),
        source_percentage=40,
    )

    section = _attention(anonymous)

    assert "Archive and controller disagree" in section and section.count("<li>") == 1
    assert "launchpad holds 30 %, the controller 50 %" in section


def test_a_frozen_release_says_why_and_links_to_unfreeze_it(anonymous):
    release = ReleaseFactory(codename="jammy", frozen=True, frozen_reason="point release")
    PublicationFactory(release=release)

    section = _attention(anonymous)

    assert "Frozen release" in section and "point release" in section
    assert f'href="/admin/packages/release/{release.pk}/change/">Unfreeze' in section


def test_with_nothing_to_do_it_says_so(anonymous):
    PublicationFactory()

    assert "Nothing needs a person now" in _attention(anonymous)


def test_many_halts_are_counted_with_a_few_named_and_a_link_to_the_rest(anonymous):
    for _ in range(11):
        PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)

    section = _attention(anonymous)

    assert '<span class="count">11</span>' in section
    assert section.count("<li>") == 8
    assert '<a href="?state=halted">and 3 more</a>' in section
