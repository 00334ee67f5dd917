"""The API's scheduled changes: what archive admins scheduled, when, who, and what became
of it; pending ones soonest first, others latest first; a fixed number of queries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.models import ScheduledAction, ScheduledState
from packages.services.scheduled import AWAITING_SIGN_OFF
from tests.factories import (
    NOW,
    PublicationFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]

URL = "/api/v1/scheduled-changes/"


def test_pending_changes_come_soonest_first_with_who_when_and_why(anonymous, publication):
    later = ScheduledChangeFactory(
        publication=publication,
        action=ScheduledAction.SET,
        percentage=100,
        run_at=NOW + timedelta(days=1),
        outcome=AWAITING_SIGN_OFF,
    )
    sooner = ScheduledChangeFactory(publication=publication)
    ScheduledChangeFactory(publication=publication, state=ScheduledState.DONE)

    body = anonymous.get(f"{URL}?state=pending").json()

    assert body["count"] == 2
    first, second = body["results"]
    assert first["id"] == sooner.pk
    assert first == {
        "id": sooner.pk,
        "action": "pause",
        "what": "pause",
        "target": "tool 1.2-1ubuntu0.1 in noble",
        "publication_id": publication.pk,
        "release": "noble",
        "source_package": "tool",
        "percentage": None,
        "policy": {},
        "run_at": "2026-12-03T13:00:00Z",
        "reason": "hold over the weekend",
        "state": "pending",
        "scheduled_by": "an archive admin",
        "created_at": "2026-12-03T12:00:00Z",
        "sign_off_needed": False,
        "signed_off_by": None,
        "signed_off_at": None,
        "cancelled_by": None,
        "cancelled_at": None,
        "cancel_reason": "",
        "ran_at": None,
        "outcome": "",
    }
    assert (second["id"], second["what"], second["sign_off_needed"]) == (
        later.pk,
        "set percentage to 100%",
        True,
    )


def test_finished_changes_say_what_became_of_them(anonymous, publication):
    ScheduledChangeFactory(
        publication=publication,
        state=ScheduledState.FAILED,
        ran_at=NOW,
        outcome="cannot pause tool: it is complete",
    )
    ScheduledChangeFactory(
        publication=publication,
        state=ScheduledState.CANCELLED,
        cancelled_by=UserFactory(username="bob"),
        cancelled_at=NOW,
        cancel_reason="bug fixed",
    )

    failed = anonymous.get(f"{URL}?state=failed").json()["results"]
    cancelled = anonymous.get(f"{URL}?state=cancelled").json()["results"]

    assert [c["outcome"] for c in failed] == ["cannot pause tool: it is complete"]
    assert [(c["cancelled_by"], c["cancel_reason"]) for c in cancelled] == [
        ("an archive admin", "bug fixed")
    ]
    assert anonymous.get(f"{URL}?state=nonsense").status_code == 400
    assert anonymous.get(f"{URL}?page=9").status_code == 404


@pytest.mark.parametrize("size", [3, 40])
def test_the_list_costs_a_fixed_number_of_queries(anonymous, django_assert_num_queries, size):
    for n in range(size):
        publication = PublicationFactory(source_package=SourcePackageFactory(name=f"p{n}"))
        ScheduledChangeFactory(publication=publication, signed_off_by=UserFactory())
        ScheduledChangeFactory(
            action=ScheduledAction.POLICY,
            publication=None,
            source_package=publication.source_package,
        )
    # 1 count, 2 the page with targets and people joined.
    with django_assert_num_queries(2):
        assert anonymous.get(URL).status_code == 200
