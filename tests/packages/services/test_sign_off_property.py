"""A property of the four-eyes rule: whatever sequence of changes one archive admin makes,
by whichever path (the services, the admin's actions, scheduled changes run when due,
policies, freezes, the management command), and whatever the controller does in between,
nothing that needs a second admin's sign-off takes effect.

What "takes effect" means is checked here from the outcome, not from the rule's own code:
an update the controller halted stays halted; no update goes to 100%; no policy takes an
update below half to 100% in one step.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from packages.domain import policy as policy_rules
from packages.holds import HoldReason
from packages.models import PhasingState, Policy, Publication, ScheduledAction
from packages.roles import ARCHIVE_ADMINS
from packages.services import (
    Change,
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
from packages.services.scheduled import (
    scheduled_change_create,
    scheduled_change_sign_off,
    scheduled_changes_run_due,
)
from tests.conftest import _client_for, group_named
from tests.factories import NOW, PublicationFactory, ReleaseFactory, UserFactory
from tests.packages.admin.admin_actions import apply_action

pytestmark = pytest.mark.django_db

PUBLICATIONS = 3
percentages = st.integers(min_value=0, max_value=100)
# The update the controller halted, twice as often as each of the others.
which = st.sampled_from([0, 1, 1, 2])
policy_fields = st.fixed_dictionaries(
    {
        "start_percentage": st.sampled_from([1, 10, 50, 90, 100]),
        "step": st.sampled_from([1, 10, 50, 60, 100]),
        "ceiling": st.sampled_from([50, 99, 100]),
    }
)
PUBLICATION_ACTIONS = ("set", "resume", "release", "pause", "halt")
operations = st.one_of(
    st.tuples(st.just("service"), st.sampled_from(PUBLICATION_ACTIONS), which, percentages),
    st.tuples(st.just("admin"), st.sampled_from(PUBLICATION_ACTIONS), which, percentages),
    st.tuples(st.just("scheduled"), st.sampled_from(PUBLICATION_ACTIONS[:3]), which, percentages),
    st.tuples(
        st.just("policy"), st.sampled_from(["service", "scheduled", "admin"]), which, policy_fields
    ),
    st.tuples(st.just("freeze"), st.sampled_from(["freeze", "unfreeze"]), which, st.none()),
    st.tuples(st.just("controller halts"), st.none(), which, st.none()),
    st.tuples(st.just("run due"), st.sampled_from(["service", "command"]), st.none(), st.none()),
    st.tuples(st.just("self sign-off"), st.none(), st.none(), st.none()),
)


def _policy_releases_everything(policy: Policy) -> bool:
    rules = policy.rules()
    return any(policy_rules.next_percentage(rules, p) == 100 for p in range(50))


def _controller_halted(publication: Publication) -> bool:
    return publication.state == PhasingState.HALTED and publication.hold_reason != HoldReason.PULLED


def _perform(op, *, alice, client, publications, now) -> None:  # noqa: C901 - one branch per path
    path, what, index, value = op
    publication = publications[index] if index is not None else None
    reason = "one admin alone"
    if path == "service":
        if what == "set":
            publication_set_percentage(
                publication=publication, percentage=value, actor=alice, reason=reason, now=now
            )
        elif what == "resume":
            publication_resume(publication=publication, actor=alice, reason=reason, now=now)
        elif what == "release":
            publication_release(publication=publication, actor=alice, reason=reason, now=now)
        elif what == "pause":
            publication_pause(publication=publication, actor=alice, reason=reason, now=now)
        else:
            publication_halt(publication=publication, actor=alice, reason=reason, now=now)
    elif path == "admin":
        action = {"release": "release_to_everyone"}.get(what, what)
        action = {"set": "set_percentage"}.get(action, action)
        apply_action(client, action, [publication], percentage=value, reason=reason)
    elif path == "scheduled":
        scheduled_change_create(
            action={"set": ScheduledAction.SET, "resume": ScheduledAction.RESUME}.get(
                what, ScheduledAction.RELEASE
            ),
            publication=publication,
            percentage=value if what == "set" else None,
            actor=alice,
            reason=reason,
            now=now,
        )
    elif path == "policy":
        scope = {"scope_package": publication.source_package}
        if what == "service":
            policy_set(actor=alice, reason=reason, now=now, **scope, **value)
        elif what == "scheduled":
            scheduled_change_create(
                action=ScheduledAction.POLICY,
                source_package=publication.source_package,
                policy=value,
                actor=alice,
                reason=reason,
                now=now,
            )
        else:
            apply_action(
                client,
                "change_policy",
                [publication],
                scope="package",
                interval="06:00:00",
                min_previous_reports=0,
                judge="ubuntu",
                insufficient_max_hold="48:00:00",
                reason=reason,
                **value,
            )
    elif path == "freeze":
        service = release_freeze if what == "freeze" else release_unfreeze
        service(release=publication.release, actor=alice, reason=reason, now=now)
    elif path == "controller halts":
        publication_transition(
            publication=publication,
            change=Change.halted(reason="new problem", by_person=False),
            now=now,
        )
    elif path == "run due":
        if what == "service":
            scheduled_changes_run_due(now=now)
        else:
            call_command("phasing_scheduled", "run", "--now", now.isoformat(), stdout=None)
    else:
        from packages.models import ScheduledChange, ScheduledState

        for change in ScheduledChange.objects.filter(state=ScheduledState.PENDING):
            scheduled_change_sign_off(change=change, actor=alice, now=now)


@pytest.fixture
def sign_off_on(settings):
    settings.PHASING_SIGN_OFF_REQUIRED = True


@pytest.mark.usefixtures("sign_off_on")
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(operations, min_size=1, max_size=6))
# The bypasses found before the rule was one service, always tried.
@example(steps=[("service", "set", 1, 99)])
@example(steps=[("admin", "set", 1, 99)])
@example(
    steps=[
        ("scheduled", "set", 0, 50),
        ("controller halts", None, 0, None),
        ("run due", "service", None, None),
    ]
)
@example(
    steps=[
        ("scheduled", "set", 1, 99),
        ("self sign-off", None, None, None),
        ("run due", "command", None, None),
    ]
)
@example(steps=[("policy", "service", 0, {"start_percentage": 100, "step": 100, "ceiling": 100})])
@example(steps=[("policy", "admin", 0, {"start_percentage": 100, "step": 100, "ceiling": 100})])
@example(
    steps=[
        ("policy", "scheduled", 0, {"start_percentage": 10, "step": 100, "ceiling": 100}),
        ("run due", "service", None, None),
    ]
)
def test_one_admin_alone_never_makes_a_change_that_needs_a_sign_off_take_effect(db, steps):
    with transaction.atomic():
        alice = UserFactory(username="alice", is_staff=True)
        alice.groups.add(group_named(ARCHIVE_ADMINS))
        client = _client_for(alice)
        release = ReleaseFactory(codename="noble", version="24.04")
        publications = [
            PublicationFactory(release=release, phased_update_percentage=30),
            PublicationFactory(
                release=release,
                state=PhasingState.HALTED,
                hold_reason=HoldReason.PROBLEMS,
                phased_update_percentage=0,
            ),
            PublicationFactory(release=release, phased_update_percentage=90),
        ]
        for number, op in enumerate(steps):
            now = NOW + timedelta(minutes=number)
            before = {p.pk: p for p in Publication.objects.all()}
            try:
                with transaction.atomic():
                    _perform(op, alice=alice, client=client, publications=publications, now=now)
            except ValidationError:
                pass  # refused, as it may be
            for publication in Publication.objects.all():
                old = before[publication.pk]
                if op[0] == "controller halts":
                    continue
                assert not (_controller_halted(old) and not _controller_halted(publication)), (
                    f"{op} resumed an update the controller halted"
                )
                assert not (
                    old.phased_update_percentage < 100
                    and publication.phased_update_percentage == 100
                ), f"{op} took an update to 100%"
            for policy in Policy.objects.all():
                assert not _policy_releases_everything(policy), f"{op} set {policy.rules()}"
            for publication in publications:
                publication.refresh_from_db()
        transaction.set_rollback(True)
