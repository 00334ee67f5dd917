"""The single entry point for percentage and state: one event per change, rules enforced."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError

from packages.domain import policy
from packages.models import EventKind, PhasingEvent, PhasingState, Policy, WriteBack
from packages.selectors import policies_by_scope
from packages.services import (
    Change,
    TransitionError,
    policy_set,
    publication_halt,
    publication_pause,
    publication_release,
    publication_resume,
    publication_set_percentage,
    publication_transition,
    release_freeze,
    release_unfreeze,
)
from packages.services.phasing import publications_supersede
from tests.factories import NOW, PublicationFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def advance(publication, percentage):
    """One step as the controller takes it."""
    return publication_transition(
        publication=publication,
        change=Change.advanced(old=publication.phased_update_percentage, new=percentage),
        now=NOW,
    )


def supersede(old, new):
    locked = type(old).objects.select_for_update().get(pk=old.pk)
    return publications_supersede([(locked, new)], now=NOW, by="sync")


@pytest.fixture
def admin():
    return UserFactory(username="archive-admin")


def test_each_change_writes_exactly_one_event(admin, django_capture_on_commit_callbacks):
    publication = PublicationFactory(phased_update_percentage=30)
    with django_capture_on_commit_callbacks():
        advance(publication, 40)
        publication_pause(
            publication=publication, actor=admin, reason="waiting for a bug report", now=NOW
        )
        publication_resume(
            publication=publication, actor=admin, reason="bug report explained", now=NOW
        )
    events = list(PhasingEvent.objects.filter(publication=publication).order_by("id"))
    assert [
        (e.kind, e.old_percentage, e.new_percentage, e.old_state, e.new_state) for e in events
    ] == [
        (EventKind.ADVANCED, 30, 40, "phasing", "phasing"),
        (EventKind.PAUSED, 40, 40, "phasing", "paused"),
        (EventKind.RESUMED, 40, 40, "paused", "phasing"),
    ]
    assert [e.actor_name for e in events] == ["controller", "an archive admin", "an archive admin"]


def test_a_percentage_change_is_queued_for_write_back_and_a_pause_is_not(admin):
    publication = PublicationFactory(phased_update_percentage=30)
    advanced = advance(publication, 40)
    paused = publication_pause(publication=publication, actor=admin, reason="look", now=NOW)
    assert advanced.write_back == WriteBack.PENDING
    assert paused.write_back == WriteBack.NOT_NEEDED


def test_a_halt_dials_to_zero_and_needs_a_reason(admin):
    publication = PublicationFactory(phased_update_percentage=60)
    with pytest.raises(ValidationError):
        publication_halt(publication=publication, reason="  ", actor=admin)
    publication_halt(publication=publication, reason="crashes on start", actor=admin, now=NOW)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (0, PhasingState.HALTED)


def test_a_halted_update_resumes_from_the_policys_first_step(admin):
    publication = PublicationFactory(phased_update_percentage=60)
    Policy.objects.create(source_package=publication.source_package, start_percentage=5, step=5)
    publication_halt(publication=publication, reason="crashes", actor=admin, now=NOW)
    publication_resume(
        publication=publication, actor=admin, reason="not ours", now=NOW + timedelta(hours=1)
    )
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (5, PhasingState.PHASING)
    assert publication.last_increase_at == NOW + timedelta(hours=1)


def test_only_a_paused_or_halted_update_can_be_resumed(admin):
    publication = PublicationFactory()
    with pytest.raises(TransitionError):
        publication_resume(publication=publication, actor=admin, reason="why not")
    assert PhasingEvent.objects.filter(publication=publication).count() == 0


def test_a_superseded_update_cannot_be_changed(admin):
    old = PublicationFactory()
    new = PublicationFactory(source_package=old.source_package, release=old.release)
    supersede(old, new)
    with pytest.raises(TransitionError):
        publication_set_percentage(publication=old, percentage=50, actor=admin, reason="oops")
    old.refresh_from_db()
    assert (old.state, old.status, old.superseded_by) == (
        PhasingState.SUPERSEDED,
        "superseded",
        new,
    )


def test_a_superseded_update_cannot_be_superseded_again():
    old = PublicationFactory()
    new = PublicationFactory(source_package=old.source_package, release=old.release)
    supersede(old, new)
    with pytest.raises(TransitionError):
        supersede(old, new)
    assert old.events.filter(kind=EventKind.SUPERSEDED).count() == 1


def test_setting_100_completes_and_release_goes_straight_to_100(admin):
    one, two = PublicationFactory(), PublicationFactory()
    publication_set_percentage(
        publication=one, percentage=100, actor=admin, reason="urgent", now=NOW
    )
    publication_release(publication=two, actor=admin, reason="security fix in updates", now=NOW)
    for publication in (one, two):
        publication.refresh_from_db()
        assert (publication.phased_update_percentage, publication.state) == (
            100,
            PhasingState.COMPLETE,
        )
        assert publication.completed_at == NOW


@pytest.mark.parametrize("percentage", [-1, 101])
def test_a_percentage_outside_0_to_100_is_refused(admin, percentage):
    publication = PublicationFactory(phased_update_percentage=30)
    with pytest.raises(TransitionError):
        publication_set_percentage(
            publication=publication, percentage=percentage, actor=admin, reason="x"
        )
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 30


def test_policy_resolves_package_then_release_then_global():
    publication = PublicationFactory()

    def step() -> int:
        return policy.resolve_for(policies_by_scope(), publication).step

    assert step() == 10
    Policy.objects.create(step=20)
    assert step() == 20
    Policy.objects.create(release=publication.release, step=5)
    assert step() == 5
    Policy.objects.create(source_package=publication.source_package, step=1)
    assert step() == 1


def test_freezing_a_release_leaves_a_note_on_each_of_its_updates_in_phasing(admin):
    phasing = PublicationFactory()
    done = PublicationFactory(
        release=phasing.release, state=PhasingState.COMPLETE, phased_update_percentage=100
    )
    release_freeze(release=phasing.release, actor=admin, reason="mirror outage", now=NOW)
    release_unfreeze(release=phasing.release, actor=admin, reason="mirrors back", now=NOW)
    assert [(e.kind, e.reason, e.actor) for e in phasing.events.order_by("id")] == [
        (EventKind.FROZEN, "mirror outage", admin),
        (EventKind.UNFROZEN, "mirrors back", admin),
    ]
    assert not done.events.exists()
    phasing.refresh_from_db()
    assert (phasing.state, phasing.phased_update_percentage) == (PhasingState.PHASING, 10)


def test_a_policy_change_shows_in_the_history_of_the_updates_it_applies_to(admin):
    publication = PublicationFactory()
    other = PublicationFactory()
    policy_set(
        scope_package=publication.source_package, actor=admin, reason="careful package", step=5
    )
    [event] = publication.events.all()
    assert event.kind == EventKind.POLICY
    assert "step 10 → 5" in event.reason and "careful package" in event.reason
    assert not other.events.exists()


@pytest.mark.django_db(transaction=True)
def test_a_change_that_waited_for_the_row_lock_is_recorded_after_the_one_it_waited_for():
    """The history never shows a pause before the resume that was committed before it."""
    import threading

    import time_machine
    from django.db import connection, connections, transaction

    from packages.models import Publication

    if connection.vendor != "postgresql":
        pytest.skip("row locks are what is under test; SQLite serialises writers instead")
    publication = PublicationFactory()
    person = UserFactory(username="second")
    failures = []

    def pause_in_another_connection() -> None:
        try:
            publication_pause(publication=publication, actor=person, reason="second")
        except BaseException as exc:  # surfaced in the test's thread
            failures.append(exc)
        finally:
            connections.close_all()

    with time_machine.travel(NOW, tick=False) as clock:
        with transaction.atomic():
            Publication.objects.select_for_update().get(pk=publication.pk)
            waiting = threading.Thread(target=pause_in_another_connection)
            waiting.start()
            with connection.cursor() as cursor:  # until the other one waits on our lock
                for _ in range(500):
                    cursor.execute(
                        "SELECT count(*) FROM pg_stat_activity "
                        "WHERE wait_event_type = 'Lock' AND datname = current_database()"
                    )
                    if cursor.fetchone()[0]:
                        break
                    waiting.join(0.01)
            clock.shift(timedelta(minutes=1))
            set_thirty = Change(EventKind.SET, percentage=30, reason="first")
            first = publication_transition(publication=publication, change=set_thirty)
        waiting.join(30)

    assert not failures
    second = PhasingEvent.objects.get(kind=EventKind.PAUSED)
    assert first.created_at == NOW + timedelta(minutes=1)
    assert second.created_at >= first.created_at
