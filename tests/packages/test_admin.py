"""The archive admins' console: publications list, phasing actions, releases, policies."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from django.urls import reverse

from packages.models import EventKind, PhasingEvent, PhasingState, Policy, Publication
from tests.factories import (
    PolicyFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:packages_publication_changelist"


def _choose(client, action: str, publications, url_name: str = CHANGELIST):
    """The first POST, from the changelist: it shows the reason page."""
    return client.post(
        reverse(url_name),
        {"action": action, "index": 0, "_selected_action": [p.pk for p in publications]},
    )


def _apply(client, action: str, objects, url_name: str = CHANGELIST, **data):
    """The second POST, from the reason page."""
    return client.post(
        reverse(url_name),
        {"action": action, "apply": "1", "_selected_action": [o.pk for o in objects], **data},
        follow=True,
    )


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


@pytest.fixture
def publication():
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"), version="1.2-1ubuntu0.1"
    )


# --- the list ---------------------------------------------------------------------------


def test_the_publications_list_shows_what_an_archive_admin_needs(archive_admin, publication):
    ProblemFactory(publication=publication)

    response = archive_admin.get(reverse(CHANGELIST))

    body = response.content.decode()
    assert response.status_code == 200
    for text in ("tool", "noble", "1.2-1ubuntu0.1", "10%", "Phasing"):
        assert text in body
    assert reverse("packages:history", args=["tool"]) in body


def test_the_publications_list_filters_by_problems_and_state(archive_admin):
    troubled = PublicationFactory(source_package=SourcePackageFactory(name="troubled"))
    ProblemFactory(publication=troubled)
    PublicationFactory(source_package=SourcePackageFactory(name="calm"))
    PublicationFactory(source_package=SourcePackageFactory(name="held"), state=PhasingState.PAUSED)

    def listed(**query) -> set[str]:
        response = archive_admin.get(reverse(CHANGELIST), query)
        return {p.source_package.name for p in response.context["cl"].result_list}

    assert listed(problems="any") == {"troubled"}
    assert listed(problems="unresolved") == {"troubled"}
    assert listed(problems="none") == {"calm", "held"}
    assert listed(state="paused") == {"held"}
    assert listed(q="trou") == {"troubled"}


def test_an_overridden_problem_is_not_unresolved(archive_admin):
    from tests.factories import OverrideFactory

    pub = PublicationFactory(source_package=SourcePackageFactory(name="tool"))
    problem = ProblemFactory(publication=pub)
    OverrideFactory(source_package=pub.source_package, bucket=problem.bucket, version="")

    response = archive_admin.get(reverse(CHANGELIST), {"problems": "unresolved"})

    assert list(response.context["cl"].result_list) == []


@pytest.mark.parametrize("count", [2, 30])
def test_the_publications_list_costs_a_fixed_number_of_queries(
    archive_admin, count, django_assert_max_num_queries
):
    for n in range(count):
        pub = PublicationFactory(source_package=SourcePackageFactory(name=f"pkg{n}"))
        ProblemFactory(publication=pub)
    # session, user, user permissions, group permissions, filtered count, full count,
    # the page (with last change and problem count as subqueries), the release filter's
    # choices, and the footer's source status
    with django_assert_max_num_queries(10):
        response = archive_admin.get(reverse(CHANGELIST))
    assert response.status_code == 200


# --- the actions ----------------------------------------------------------------------------


def test_pausing_asks_for_a_reason_first_and_changes_nothing_yet(archive_admin, publication):
    response = _choose(archive_admin, "pause", [publication])

    assert response.status_code == 200
    assert 'name="reason"' in response.content.decode()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not PhasingEvent.objects.exists()


def test_an_archive_admin_pauses_an_update_with_a_reason(
    archive_admin, archive_admin_user, publication
):
    response = _apply(archive_admin, "pause", [publication], reason="waiting for bug 123")

    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    assert publication.phased_update_percentage == 10
    event = PhasingEvent.objects.get()
    assert event.kind == EventKind.PAUSED
    assert event.actor == archive_admin_user
    assert event.reason == "waiting for bug 123"
    assert any("Paused" in m for m in _messages(response))


def test_an_action_without_a_reason_shows_the_page_again(archive_admin, publication):
    response = _apply(archive_admin, "pause", [publication], reason="  ")

    assert response.context["form"].errors["reason"]
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING


def test_a_change_the_state_does_not_allow_is_reported_not_crashed_on(archive_admin, publication):
    ok = PublicationFactory(source_package=SourcePackageFactory(name="fine"))
    publication_paused = PublicationFactory(
        source_package=SourcePackageFactory(name="held"), state=PhasingState.PAUSED
    )

    response = _apply(archive_admin, "pause", [ok, publication_paused], reason="hold everything")

    assert response.status_code == 200
    messages = _messages(response)
    assert any("Paused: fine" in m for m in messages)
    assert any("held" in m and "cannot" in m for m in messages)
    ok.refresh_from_db()
    assert ok.state == PhasingState.PAUSED


def test_resuming_a_halted_update_starts_again_from_the_first_step(archive_admin):
    halted = PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)

    _apply(archive_admin, "resume", [halted], reason="fixed in the error tracker")

    halted.refresh_from_db()
    assert halted.state == PhasingState.PHASING
    assert halted.phased_update_percentage == 10


def test_halting_pulls_the_update_to_zero(archive_admin, publication):
    _apply(archive_admin, "halt", [publication], reason="regression, bug 42")

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    assert publication.phased_update_percentage == 0
    assert PhasingEvent.objects.get().reason == "regression, bug 42"


def test_setting_the_percentage(archive_admin, publication):
    _apply(archive_admin, "set_percentage", [publication], percentage=50, reason="confident")

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 50
    assert PhasingEvent.objects.get().kind == EventKind.SET


@pytest.mark.parametrize("value", [-1, 101, "many"])
def test_a_percentage_outside_0_to_100_is_refused(archive_admin, publication, value):
    response = _apply(archive_admin, "set_percentage", [publication], percentage=value, reason="x")

    assert response.context["form"].errors["percentage"]
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10


def test_releasing_to_everyone_goes_straight_to_100(archive_admin, publication):
    _apply(archive_admin, "release_to_everyone", [publication], reason="urgent security fix")

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 100
    assert publication.state == PhasingState.COMPLETE


def test_freezing_the_releases_of_a_selection_records_who_and_why(
    archive_admin, archive_admin_user, publication
):
    _apply(archive_admin, "freeze_release", [publication], reason="archive maintenance")

    release = publication.release
    release.refresh_from_db()
    assert release.frozen
    assert release.frozen_by == archive_admin_user
    assert release.frozen_reason == "archive maintenance"
    entry = LogEntry.objects.get(object_id=str(release.pk))
    assert "archive maintenance" in entry.get_change_message()

    _apply(archive_admin, "unfreeze_release", [publication], reason="done")
    release.refresh_from_db()
    assert not release.frozen


def test_changing_the_policy_of_the_selected_packages(archive_admin, archive_admin_user):
    one = PublicationFactory(source_package=SourcePackageFactory(name="one"))
    two = PublicationFactory(source_package=SourcePackageFactory(name="two"))

    _apply(
        archive_admin,
        "change_policy",
        [one, two],
        scope="package",
        start_percentage=1,
        step=10,
        interval="03:00:00",
        ceiling=100,
        schedule="1, 2, 5, 10, 20, 50, 100",
        min_previous_reports=0,
        reason="slow lane for risky packages",
    )

    policies = Policy.objects.filter(source_package__name__in=["one", "two"])
    assert policies.count() == 2
    assert {tuple(p.schedule) for p in policies} == {(1, 2, 5, 10, 20, 50, 100)}
    assert {p.interval for p in policies} == {timedelta(hours=3)}
    entries = LogEntry.objects.filter(user=archive_admin_user)
    assert entries.count() == 2
    assert all("slow lane for risky packages" in e.get_change_message() for e in entries)


def test_changing_the_policy_of_the_selected_release(archive_admin, publication):
    PolicyFactory(release=publication.release, step=10)

    _apply(
        archive_admin,
        "change_policy",
        [publication],
        scope="release",
        start_percentage=10,
        step=5,
        interval="06:00:00",
        ceiling=100,
        min_previous_reports=0,
        reason="smaller steps this week",
    )

    policy = Policy.objects.get(release=publication.release)
    assert policy.step == 5
    entry = LogEntry.objects.get(object_id=str(policy.pk))
    assert "step 10 → 5" in entry.get_change_message()


def test_a_policy_schedule_must_rise(archive_admin, publication):
    response = _apply(
        archive_admin,
        "change_policy",
        [publication],
        scope="package",
        start_percentage=10,
        step=5,
        interval="06:00:00",
        ceiling=100,
        schedule="50, 10",
        min_previous_reports=0,
        reason="x",
    )

    assert response.context["form"].errors["schedule"]
    assert not Policy.objects.exists()


# --- who may ---------------------------------------------------------------------------------


@pytest.fixture
def viewer(client):
    """Staff who may look at publications but not change phasing."""
    user = UserFactory(username="viewer", is_staff=True)
    user.user_permissions.add(
        Permission.objects.get(codename="view_publication"),
        Permission.objects.get(codename="change_publication"),
    )
    client.force_login(user)
    return client


def test_staff_without_the_phasing_permission_are_not_offered_the_actions(viewer, publication):
    response = viewer.get(reverse(CHANGELIST))

    assert response.status_code == 200
    assert 'value="pause"' not in response.content.decode()


def test_staff_without_the_phasing_permission_cannot_post_an_action(viewer, publication):
    _apply(viewer, "pause", [publication], reason="sneaky")

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not PhasingEvent.objects.exists()


def test_the_change_form_does_not_let_anyone_edit_percentage_or_state(
    admin_client_superuser, publication
):
    url = reverse("admin:packages_publication_change", args=[publication.pk])
    page = admin_client_superuser.get(url)
    assert page.status_code == 200
    assert 'name="phased_update_percentage"' not in page.content.decode()
    assert 'name="state"' not in page.content.decode()

    admin_client_superuser.post(url, {"phased_update_percentage": 100, "state": "complete"})

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.state == PhasingState.PHASING


def test_publications_are_neither_added_nor_deleted_in_the_admin(
    admin_client_superuser, publication
):
    assert admin_client_superuser.get(reverse("admin:packages_publication_add")).status_code == 403
    delete = reverse("admin:packages_publication_delete", args=[publication.pk])
    assert admin_client_superuser.post(delete, {"post": "yes"}).status_code == 403
    assert Publication.objects.filter(pk=publication.pk).exists()


def test_phasing_events_are_read_only_even_for_superusers(admin_client_superuser, publication):
    _apply(admin_client_superuser, "pause", [publication], reason="look")
    event = PhasingEvent.objects.get()
    change = reverse("admin:packages_phasingevent_change", args=[event.pk])

    assert admin_client_superuser.get(reverse("admin:packages_phasingevent_add")).status_code == 403
    page = admin_client_superuser.get(change)
    assert page.status_code == 200
    assert 'name="reason"' not in page.content.decode()
    admin_client_superuser.post(change, {"reason": "rewritten"})
    delete = reverse("admin:packages_phasingevent_delete", args=[event.pk])
    assert admin_client_superuser.post(delete, {"post": "yes"}).status_code == 403
    event.refresh_from_db()
    assert event.reason == "look"


# --- releases and policies ---------------------------------------------------------------------


def test_freezing_from_the_release_list(archive_admin):
    release = ReleaseFactory(codename="jammy", version="22.04")

    _apply(
        archive_admin,
        "freeze",
        [release],
        "admin:packages_release_changelist",
        reason="mirror outage",
    )

    release.refresh_from_db()
    assert release.frozen
    assert release.frozen_reason == "mirror outage"
    _apply(archive_admin, "unfreeze", [release], "admin:packages_release_changelist", reason="back")
    release.refresh_from_db()
    assert not release.frozen


def test_a_policy_saved_in_its_form_needs_a_reason_and_logs_it_once(
    archive_admin, archive_admin_user
):
    package = SourcePackageFactory(name="tool")
    form = {
        "source_package": package.pk,
        "start_percentage": 5,
        "step": 5,
        "interval": "06:00:00",
        "ceiling": 100,
        "schedule": "[]",
        "min_previous_reports": 0,
    }

    refused = archive_admin.post(reverse("admin:packages_policy_add"), form)
    assert refused.status_code == 200
    assert not Policy.objects.exists()

    archive_admin.post(reverse("admin:packages_policy_add"), {**form, "reason": "gentle start"})

    policy = Policy.objects.get()
    assert policy.start_percentage == 5
    entry = LogEntry.objects.get(user=archive_admin_user)
    assert "gentle start" in entry.get_change_message()


# --- the policy service behind both ------------------------------------------------------------


def test_policy_set_refuses_a_policy_for_both_a_release_and_a_package(superuser):
    from django.core.exceptions import ValidationError

    from packages.services import policy_set

    with pytest.raises(ValidationError):
        policy_set(
            scope_release=ReleaseFactory(),
            scope_package=SourcePackageFactory(),
            actor=superuser,
            reason="both",
            step=5,
        )
    with pytest.raises(ValidationError):
        policy_set(actor=superuser, reason="typo", stepp=5)
    with pytest.raises(ValidationError):
        policy_set(actor=superuser, reason="", step=5)
    assert not Policy.objects.exists()


def test_policy_set_without_a_scope_changes_the_global_policy_in_place(superuser):
    from packages.services import policy_set

    first = policy_set(actor=superuser, reason="start", step=10)
    second = policy_set(actor=superuser, reason="slower", step=5)

    assert first.pk == second.pk
    assert Policy.objects.get().step == 5
    assert Policy.objects.get().scope_label == "all updates"
    assert LogEntry.objects.count() == 2
