"""The page of one update: what everyone reads, what only triagers read, and the actions
only archive admins see and make."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from overview.models import Verdict
from packages.models import (
    EventKind,
    PhasingEvent,
    PhasingState,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
)
from tests.factories import (
    NOW,
    AssessmentFactory,
    CrashReportFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

PERSONAS = ("anonymous", "member", "triager", "archive_admin", "admin_client_superuser")
ACTING = {"archive_admin", "admin_client_superuser"}
READING_REPORTS = {"triager", "admin_client_superuser"}
ACTIONS = ("pause", "resume", "halt", "set", "release")


def url(publication, action: str | None = None) -> str:
    if action is None:
        return reverse("overview:update", args=[publication.pk])
    return reverse("overview:update-act", args=[publication.pk, action])


def with_problem_and_reports(publication, *, reports: int = 2):
    problem = ProblemFactory(publication=publication)
    for _ in range(reports):
        CrashReportFactory(
            bucket=problem.bucket,
            source_package=publication.source_package,
            version=publication.version,
            release=publication.release,
            stack_trace="#0 SECRET_FRAME in crash_here ()",
        )
    return problem


@pytest.fixture
def client_of(request):
    return lambda name: request.getfixturevalue(name)


@pytest.mark.parametrize("persona", PERSONAS)
def test_every_role_reads_the_update_and_only_archive_admins_see_its_actions(
    persona, client_of, publication
):
    AssessmentFactory(publication=publication)
    PhasingEventFactory(publication=publication)
    response = client_of(persona).get(url(publication))
    assert response.status_code == 200
    text = response.content.decode()
    assert "tool" in text and publication.version in text
    assert "crash rate 0.9×" in text  # the verdict's evidence
    assert "no problems: 10% → 20%" in text  # the event's reason
    for action in ACTIONS:
        assert (url(publication, action) in text) == (persona in ACTING)


@pytest.mark.parametrize("persona", PERSONAS)
def test_restricted_reports_show_only_to_triagers_and_superusers(persona, client_of, publication):
    problem = with_problem_and_reports(publication)
    response = client_of(persona).get(url(publication))
    text = response.content.decode()
    assert str(problem.bucket) in text  # the problem itself is public
    shown = reverse("triage:reports", args=[problem.bucket_id]) in text
    assert shown == (persona in READING_REPORTS)
    assert ("/reports/" in text) == (persona in READING_REPORTS)
    assert "SECRET_FRAME" not in text  # never the trace itself, even to triagers


def test_an_unknown_update_is_a_404(anonymous):
    assert anonymous.get(reverse("overview:update", args=[999999])).status_code == 404


@pytest.mark.parametrize("persona", ["anonymous", "member", "triager"])
@pytest.mark.parametrize("action", ACTIONS)
def test_a_post_from_anyone_but_an_archive_admin_is_refused(
    persona, action, client_of, publication
):
    response = client_of(persona).post(
        url(publication, action), {f"{action}-reason": "because", f"{action}-percentage": "50"}
    )
    assert response.status_code == 403
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.state == PhasingState.PHASING
    assert not PhasingEvent.objects.filter(publication=publication).exists()


@pytest.mark.parametrize("persona", sorted(ACTING))
def test_an_archive_admin_pauses_and_resumes_on_the_page(persona, client_of, publication):
    client = client_of(persona)
    response = client.post(url(publication, "pause"), {"pause-reason": "waiting on LP #1"})
    assert response.status_code == 302 and response["Location"] == url(publication)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    event = PhasingEvent.objects.get(publication=publication, kind=EventKind.PAUSED)
    assert event.reason == "waiting on LP #1"
    page = client.get(url(publication)).content.decode()
    assert "Paused: tool" in page  # the message after the action
    client.post(url(publication, "resume"), {"resume-reason": "fixed"})
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING


def test_an_archive_admin_halts_sets_and_releases(archive_admin, publication):
    archive_admin.post(url(publication, "set"), {"set-percentage": "40", "set-reason": "ahead"})
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 40
    archive_admin.post(url(publication, "halt"), {"halt-reason": "regression"})
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)
    archive_admin.post(url(publication, "release"), {"release-reason": "urgent fix"})
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (
        PhasingState.COMPLETE,
        100,
    )
    kinds = list(
        PhasingEvent.objects.filter(publication=publication)
        .order_by("created_at", "id")
        .values_list("kind", flat=True)
    )
    assert kinds == [EventKind.SET, EventKind.HALTED, EventKind.RELEASED]


@pytest.mark.parametrize(
    ("action", "data", "error"),
    [
        ("pause", {"pause-reason": "   "}, "This field is required."),
        ("halt", {}, "This field is required."),
        ("set", {"set-percentage": "140", "set-reason": "x"}, "less than or equal to 100"),
        ("set", {"set-percentage": "half", "set-reason": "x"}, "Enter a whole number."),
        ("resume", {"resume-reason": "x", "resume-run_at": "yesterday"}, "Enter a valid date"),
    ],
)
def test_bad_input_is_a_400_with_the_error_and_changes_nothing(
    action, data, error, archive_admin, publication
):
    response = archive_admin.post(url(publication, action), data)
    assert response.status_code == 400
    assert error in response.content.decode()
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 10)


def test_an_action_the_state_refuses_is_a_409_with_the_reason(archive_admin, publication):
    response = archive_admin.post(url(publication, "resume"), {"resume-reason": "go"})
    assert response.status_code == 409
    assert "form-error" in response.content.decode()


def test_an_unknown_action_is_a_404_and_a_get_of_an_action_is_a_405(archive_admin, publication):
    assert archive_admin.post(url(publication, "explode"), {}).status_code == 404
    assert archive_admin.get(url(publication, "pause")).status_code == 405


def test_the_actions_need_the_csrf_token(archive_admin_user, publication):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(archive_admin_user)
    response = client.post(url(publication, "pause"), {"pause-reason": "x"})
    assert response.status_code == 403
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING


def test_an_action_with_a_time_is_scheduled_and_shown_on_the_page(archive_admin, publication):
    run_at = NOW + timedelta(days=1)
    response = archive_admin.post(
        url(publication, "pause"),
        {"pause-reason": "weekend", "pause-run_at": run_at.strftime("%Y-%m-%d %H:%M")},
    )
    assert response.status_code == 302
    change = ScheduledChange.objects.get(publication=publication)
    assert (change.action, change.state) == (ScheduledAction.PAUSE, ScheduledState.PENDING)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    page = archive_admin.get(url(publication)).content.decode()
    assert f"scheduled-{change.pk}" in page and "weekend" in page


def test_a_halt_cannot_be_scheduled(archive_admin, publication):
    # The halt's form has no time: a pull is urgent.
    response = archive_admin.get(url(publication))
    assert "halt-run_at" not in response.content.decode()


@pytest.fixture
def sign_off_required(settings):
    settings.PHASING_SIGN_OFF_REQUIRED = True


@pytest.fixture
def second_admin(db):
    from django.contrib.auth.models import Group
    from django.test import Client

    from packages.roles import ARCHIVE_ADMINS
    from tests.conftest import group_named

    user = UserFactory(username="second", is_staff=True)
    user.groups.add(group_named(ARCHIVE_ADMINS))
    assert Group.objects.filter(name=ARCHIVE_ADMINS).exists()
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.usefixtures("sign_off_required")
def test_a_release_waits_for_a_second_admin_who_approves_it_on_the_page(
    archive_admin, second_admin, publication
):
    archive_admin.post(url(publication, "release"), {"release-reason": "security fix"})
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    change = ScheduledChange.objects.get(publication=publication)
    sign_off_url = reverse("overview:update-sign-off", args=[publication.pk, change.pk])
    page = second_admin.get(url(publication)).content.decode()
    assert "Waiting for a second archive admin" in page
    assert "security fix" in page and "an archive admin" in page and sign_off_url in page

    # The one who asked cannot approve it.
    response = archive_admin.post(sign_off_url, {"decision": "approve", "reason": "me"})
    assert response.status_code == 409
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10

    response = second_admin.post(sign_off_url, {"decision": "approve", "reason": "checked"})
    assert response.status_code == 302
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (
        PhasingState.COMPLETE,
        100,
    )
    event = PhasingEvent.objects.get(publication=publication, kind=EventKind.RELEASED)
    assert event.actor_name == "an archive admin"
    assert "signed off by an archive admin" in event.reason and "checked" in event.reason
    page = second_admin.get(url(publication)).content.decode()
    assert "signed off by an archive admin" in page


@pytest.mark.usefixtures("sign_off_required")
def test_a_second_admin_refuses_a_change_with_a_reason(archive_admin, second_admin, publication):
    archive_admin.post(url(publication, "release"), {"release-reason": "hurry"})
    change = ScheduledChange.objects.get(publication=publication)
    sign_off_url = reverse("overview:update-sign-off", args=[publication.pk, change.pk])
    assert second_admin.post(sign_off_url, {"decision": "refuse"}).status_code == 400
    assert (
        second_admin.post(sign_off_url, {"decision": "refuse", "reason": "no"}).status_code == 302
    )
    change.refresh_from_db()
    assert change.state == ScheduledState.CANCELLED
    assert "no" in change.cancel_reason
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10


@pytest.mark.parametrize("persona", ["anonymous", "member", "triager"])
def test_only_archive_admins_sign_off(persona, client_of, publication):
    change = ScheduledChangeFactory(
        publication=publication, action=ScheduledAction.RELEASE, run_at=NOW, outcome="waiting"
    )
    sign_off_url = reverse("overview:update-sign-off", args=[publication.pk, change.pk])
    response = client_of(persona).post(sign_off_url, {"decision": "approve", "reason": "ok"})
    assert response.status_code == 403
    change.refresh_from_db()
    assert change.signed_off_by is None


def test_the_page_costs_the_same_queries_with_one_event_or_many(
    django_assert_num_queries, anonymous
):
    small = PublicationFactory(source_package=SourcePackageFactory(name="small"))
    PhasingEventFactory(publication=small)
    ProblemFactory(publication=small)
    big = PublicationFactory(source_package=SourcePackageFactory(name="big"))
    AssessmentFactory(publication=big)
    for n in range(30):
        PhasingEventFactory(publication=big, created_at=NOW - timedelta(hours=n))
    for _ in range(5):
        with_problem_and_reports(big, reports=3)
    for _ in range(4):
        ScheduledChangeFactory(publication=big)
    # The update with its people and assessment; its problems; its events; the policies;
    # the members of its release; the scheduled changes; the fleet agents' counts; the
    # footer's sources.
    for publication in (small, big):
        with django_assert_num_queries(8):
            assert anonymous.get(url(publication)).status_code == 200


def test_a_triager_pays_one_query_more_for_the_reports(django_assert_num_queries, triager):
    small = PublicationFactory(source_package=SourcePackageFactory(name="small"))
    with_problem_and_reports(small, reports=1)
    big = PublicationFactory(source_package=SourcePackageFactory(name="big"))
    for _ in range(6):
        with_problem_and_reports(big, reports=8)
    # As anonymous (8), the session and the user (2), the user's and the groups'
    # permissions (2), the latest reports of each problem (1).
    for publication in (small, big):
        with django_assert_num_queries(13):
            response = triager.get(url(publication))
        assert response.status_code == 200


def test_the_history_and_problem_pages_link_to_the_update_page(anonymous, publication):
    problem = ProblemFactory(publication=publication)
    history = anonymous.get(publication.get_absolute_url()).content.decode()
    assert f'href="{url(publication)}"' in history
    bucket_page = anonymous.get(problem.bucket.get_absolute_url()).content.decode()
    assert f'href="{url(publication)}"' in bucket_page


def test_the_admins_sign_off_keeps_its_reason_in_the_history(
    archive_admin, second_admin, publication, settings
):
    from tests.packages.admin.admin_actions import apply_action

    settings.PHASING_SIGN_OFF_REQUIRED = True
    archive_admin.post(url(publication, "release"), {"release-reason": "CVE fix"})
    change = ScheduledChange.objects.get(publication=publication)
    apply_action(
        second_admin,
        "sign_off",
        [change],
        url_name="admin:packages_scheduledchange_changelist",
        reason="read the diff",
    )
    event = PhasingEvent.objects.get(publication=publication, kind=EventKind.RELEASED)
    assert "signed off by an archive admin" in event.reason and "read the diff" in event.reason


def test_an_archive_admin_cancels_a_change_scheduled_for_later_with_a_reason(
    archive_admin, publication
):
    change = ScheduledChangeFactory(publication=publication)
    page = archive_admin.get(url(publication)).content.decode()
    assert f'id="later-{change.pk}"' in page
    sign_off_url = reverse("overview:update-sign-off", args=[publication.pk, change.pk])
    response = archive_admin.post(sign_off_url, {"decision": "cancel", "reason": "not needed"})
    assert response.status_code == 302
    change.refresh_from_db()
    assert (change.state, change.cancel_reason) == (ScheduledState.CANCELLED, "not needed")
    page = archive_admin.get(url(publication)).content.decode()
    assert "Cancelled: pause tool" in page and "cancelled by an archive admin: not needed" in page


def test_a_change_of_another_update_cannot_be_signed_off_through_this_one(
    archive_admin, publication
):
    other = ScheduledChangeFactory()
    sign_off_url = reverse("overview:update-sign-off", args=[publication.pk, other.pk])
    response = archive_admin.post(sign_off_url, {"decision": "cancel", "reason": "x"})
    assert response.status_code == 404
    other.refresh_from_db()
    assert other.state == ScheduledState.PENDING


def test_an_archive_admin_pays_no_query_per_form_or_pending_change(
    django_assert_num_queries, archive_admin
):
    small = PublicationFactory(source_package=SourcePackageFactory(name="small"))
    ScheduledChangeFactory(publication=small)
    big = PublicationFactory(source_package=SourcePackageFactory(name="big"))
    for n in range(6):
        ScheduledChangeFactory(publication=big, created_by=UserFactory(username=f"asker{n}"))
        ScheduledChangeFactory(
            publication=big,
            action=ScheduledAction.RELEASE,
            run_at=NOW,
            outcome="waiting for a second archive admin's sign-off",
            created_by=UserFactory(username=f"hurried{n}"),
        )
    # As anonymous (8), the session and the user (2), the user's and the groups'
    # permissions (2); no reports without a problem, none per form or change.
    for publication in (small, big):
        with django_assert_num_queries(12):
            response = archive_admin.get(url(publication))
        assert response.status_code == 200
    assert response.content.decode().count('name="decision" value="approve"') == 6


def test_ids_out_of_range_are_404s_not_500s(archive_admin):
    huge = "9" * 30
    assert archive_admin.get(f"/updates/{huge}/").status_code == 404
    assert archive_admin.post(f"/updates/{huge}/pause/", {"pause-reason": "x"}).status_code == 404
    response = archive_admin.post(f"/updates/{huge}/sign-off/{huge}/", {"reason": "x"})
    assert response.status_code == 404


def test_deciding_on_a_change_that_already_ran_is_a_409_that_says_so(archive_admin, publication):
    change = ScheduledChangeFactory(publication=publication, state=ScheduledState.DONE)
    sign_off_url = reverse("overview:update-sign-off", args=[publication.pk, change.pk])
    response = archive_admin.post(sign_off_url, {"decision": "cancel", "reason": "x"})
    assert response.status_code == 409
    assert "That change is done: nothing to decide." in response.content.decode()


def test_scheduled_changes_and_the_admins_list_link_to_the_update_page(
    archive_admin, anonymous, publication
):
    ScheduledChangeFactory(publication=publication)
    overview = anonymous.get(reverse("overview:index")).content.decode()
    assert f'href="{url(publication)}"' in overview
    changelist = archive_admin.get(reverse("admin:packages_publication_changelist"))
    assert f'href="{url(publication)}"' in changelist.content.decode()


def test_the_update_page_shows_the_uptake_the_fleet_agents_measured(anonymous, publication):
    from overview.models import FleetReport

    for n, on_new in enumerate((True, True, False, False)):
        FleetReport.objects.create(
            publication=publication,
            machine=f"{n:064x}",
            installed_version=publication.version if on_new else "1.2-1",
            held_back=not on_new,
            on_new_version=on_new,
            reported_at=NOW,
            day=NOW.date(),
        )
    page = anonymous.get(url(publication)).content.decode()
    assert "measured: 2 of 4 reporting machines run it (50%)" in page


def test_a_halted_update_without_a_rise_does_not_read_as_healthy(anonymous, publication):
    publication.state, publication.phased_update_percentage = PhasingState.HALTED, 0
    publication.save()
    PhasingEventFactory(
        publication=publication, kind=EventKind.HALTED, actor_name="ada", reason="bad postinst"
    )
    AssessmentFactory(
        publication=publication, verdict=Verdict.HEALTHY, crashes_new=12, crashes_old=0
    )

    html = anonymous.get(f"/updates/{publication.pk}/").content.decode()

    assert "No rise seen</span>" not in html
    assert '<span class="verdict verdict-insufficient">Halted, though no rise seen</span>' in html
    assert "Halted by ada: bad postinst; no rise in the crash rate over 12 crash reports." in html


def test_a_verdict_says_since_when_the_controller_found_it_unchanged(anonymous, publication):
    # A tick leaves an assessment it finds the same as it was, with the time it was found.
    AssessmentFactory(publication=publication, assessed_at=NOW - timedelta(hours=3))

    html = anonymous.get(url(publication)).content.decode()

    assert "(Sequential test, unchanged since 3 h ago)" in html
