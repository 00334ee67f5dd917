"""Every URL of the project, as every persona: the expected status, and no leaked crash report.

The routes are enumerated from the resolver, so a new URL without a line in ROUTES (or,
for an admin model, in ADMIN_MODELS) fails the test by name. Path parameters are filled
with real ids of the seeded objects. A marker is planted in a crash report's stack trace
and environment; it must never appear for anonymous people, members or archive admins, and
must appear for triagers and superusers on the pages that show crash reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib.contenttypes.models import ContentType
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from overview.models import Notification, WebhookDelivery, WebhookEndpoint
from packages.models import (
    EventKind,
    PhasingEvent,
    PhasingState,
    SingleSignOnIdentity,
    SourceSync,
)
from packages.roles import TRIAGERS
from tests.conftest import group_named
from tests.factories import (
    NOW,
    CrashReportFactory,
    ErrorBucketFactory,
    OverrideFactory,
    PolicyFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
)

pytestmark = pytest.mark.django_db

MARKER = "MARKER-7f3a-crash-content"
PERSONAS = ("anonymous", "member", "triager", "archive_admin", "superuser")


@dataclass(frozen=True)
class Expect:
    """Statuses for anonymous, member, triager, archive admin, superuser, in that order."""

    statuses: tuple[int, ...]
    # Personas for whom the page must show the marker (all others must never see it).
    marker: frozenset[str] = frozenset()


def expect(spec: str, marker: tuple[str, ...] = ()) -> Expect:
    statuses = tuple(int(part) for part in spec.split())
    assert len(statuses) == len(PERSONAS), spec
    return Expect(statuses, frozenset(marker))


@dataclass(frozen=True)
class Route:
    expected: Expect
    # URL keyword -> key of the seeded object whose id (or name) fills it.
    params: dict[str, str] = field(default_factory=dict)
    query: str = ""
    path: str | None = None  # for patterns without a name


def route(expected: Expect, query: str = "", path: str | None = None, **params: str) -> Route:
    return Route(expected, params, query, path)


PUBLIC = expect("200 200 200 200 200")
TRIAGE = expect("302 403 200 403 200", marker=("triager", "superuser"))
TRIAGE_NO_CONTENT = expect("302 403 200 403 200")
TRIAGE_POST_ONLY = expect("302 403 405 403 405")
POST_ONLY = expect("405 405 405 405 405")
# The Django admin sends everyone who is not staff to its login page.
STAFF = expect("302 302 302 200 200")

ROUTES: dict[str, Route] = {
    # Public pages, feeds and the API: the same for everyone.
    "overview:index": route(PUBLIC),
    "overview:problem": route(PUBLIC, pk="bucket"),
    "overview:machine": route(PUBLIC),
    "overview:sources": route(PUBLIC),
    "favicon": route(expect("302 302 302 302 302")),
    "overview:feeds": route(PUBLIC),
    "overview:feed-halts": route(PUBLIC),
    "overview:feed-changes": route(PUBLIC),
    "overview:history": route(PUBLIC, name="package_name"),
    # The update page: public; its actions and sign-offs are POSTs of archive admins.
    "overview:update": route(PUBLIC, pk="publication"),
    "overview:update-act": route(POST_ONLY, pk="publication", action="action_name"),
    "overview:update-sign-off": route(
        POST_ONLY, pk="publication", change_pk="packages_scheduledchange"
    ),
    # The index of the endpoints answers at /api/v1/, ahead of django-ninja's own root.
    "api:index": route(PUBLIC),
    "api:api-root": route(PUBLIC),
    "api:openapi-json": route(PUBLIC),
    "api:openapi-view": route(PUBLIC),
    "api:publications": route(PUBLIC),
    "api:publication_events": route(PUBLIC, publication_id="publication"),
    "api:problems": route(PUBLIC),
    "api:scheduled_changes": route(PUBLIC),
    "api:problem": route(PUBLIC, bucket_id="bucket"),
    "api:machine": route(PUBLIC, query="machine_id=0123456789abcdef0123456789abcdef"),
    # A fleet's machine ids come in a POST body.
    "api:machines": route(POST_ONLY),
    # whoopsie's crash database: machines POST reports; nothing is ever read back here.
    "whoopsie-submit": route(POST_ONLY, path="/" + "a" * 128),
    # The fleet agent's daily batch: POST only.
    "api:fleet_reports": route(POST_ONLY),
    # Operations: health for load balancers, the same for everyone (here 503: no crash
    # source has synced in this seed), metrics for the scraper's token and the people
    # given overview.view_metrics (superusers), never for any staff.
    "healthz": route(expect("503 503 503 503 503")),
    "metrics": route(expect("403 403 403 403 200")),
    # Accounts.
    "login": route(PUBLIC),
    "logout": route(POST_ONLY),
    # Triagers only.
    "triage:reports": route(TRIAGE, pk="bucket"),
    "triage:report": route(TRIAGE, pk="report"),
    "triage:overrides": route(TRIAGE_NO_CONTENT),
    "triage:override_bucket": route(TRIAGE_POST_ONLY, pk="bucket"),
    "triage:override_rate": route(TRIAGE_POST_ONLY),
    "triage:revoke": route(TRIAGE_POST_ONLY, pk="override"),
    # The admin site itself.
    "admin:index": route(STAFF),
    "admin:login": route(expect("200 200 200 302 302")),
    "admin:logout": route(expect("302 302 302 405 405")),
    "admin:password_change": route(STAFF),
    "admin:password_change_done": route(STAFF),
    "admin:autocomplete": route(expect("302 302 302 403 403")),
    "admin:jsi18n": route(STAFF),
    "admin:view_on_site": route(
        expect("302 302 302 302 302"), content_type_id="package_content_type", object_id="package"
    ),
    "admin:app_list": route(STAFF, app_label="packages_app"),
    "admin/(?P<url>.*)$": route(expect("302 302 302 404 404"), path="/admin/no-such-page/"),
    "admin:auth_user_password_change": route(expect("302 302 302 403 200"), id="user"),
    # The endpoint change page's "Send a test event" button: POST only.
    "admin:overview_webhookendpoint_send_test": route(
        expect("302 302 302 405 405"), pk="overview_webhookendpoint"
    ),
    # Single sign-on is not configured here: not found for everyone; sign-out is POST only.
    "oidc_authentication_init": route(expect("404 404 404 404 404")),
    "oidc_authentication_callback": route(expect("404 404 404 404 404")),
    "oidc_logout": route(expect("405 405 405 405 405")),
}

# Admin models: statuses of changelist, add, history, delete, change, first for the archive
# admin, then for the superuser. Everyone else is sent to the admin login (302), and the
# bare object URL redirects to its change page (302) for everyone.
ADMIN_MODELS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # model: (archive admin, superuser, personas who see the marker on the change page)
    "packages_publication": ("200 403 200 403 200", "200 403 200 403 200", ()),
    "packages_phasingevent": ("200 403 200 403 200", "200 403 200 403 200", ()),
    "packages_release": ("200 403 200 403 200", "200 200 200 403 200", ()),
    "packages_policy": ("200 200 200 403 200", "200 200 200 403 200", ()),
    "packages_sourcepackage": ("200 403 200 403 200", "200 200 200 403 200", ()),
    "packages_person": ("200 403 200 403 200", "200 200 200 200 200", ()),
    "overview_errorbucket": ("200 403 200 403 200", "200 403 200 403 200", ()),
    "overview_crashreport": ("403 403 403 403 403", "200 403 200 403 200", ("superuser",)),
    "overview_problem": ("200 403 200 403 200", "200 403 200 403 200", ()),
    "overview_override": ("200 403 200 403 200", "200 403 200 403 200", ()),
    "overview_notification": ("200 403 200 403 200", "200 403 200 403 200", ()),
    "packages_sourcesync": ("200 403 200 403 200", "200 403 200 403 200", ()),
    # Made by the publication and release actions; cancelled and signed off by actions.
    "packages_scheduledchange": ("200 403 200 403 200", "200 403 200 403 200", ()),
    # Where notices go: archive admins manage endpoints; deliveries are read-only records.
    "overview_webhookendpoint": ("200 200 200 200 200", "200 200 200 200 200", ()),
    "overview_webhookdelivery": ("200 403 200 403 200", "200 403 200 403 200", ()),
    # Written at each single sign-on; only a superuser reads them or removes a link.
    "packages_singlesignonidentity": ("403 403 403 403 403", "200 403 200 200 200", ()),
    "auth_group": ("403 403 403 403 403", "200 200 200 200 200", ()),
    "auth_user": ("403 403 403 403 403", "200 200 200 200 200", ()),
    "axes_accessattempt": ("403 403 403 403 403", "200 403 200 200 200", ()),
    "axes_accesslog": ("403 403 403 403 403", "200 403 200 200 200", ()),
    "axes_accessfailurelog": ("403 403 403 403 403", "200 403 200 200 200", ()),
}
ADMIN_VIEWS = ("changelist", "add", "history", "delete", "change")

for _model, (_archive, _super, _marker) in ADMIN_MODELS.items():
    _app, _name = _model.split("_", 1)
    for _view, _a, _s in zip(ADMIN_VIEWS, _archive.split(), _super.split(), strict=True):
        _marked = _marker if _view == "change" else ()
        ROUTES[f"admin:{_model}_{_view}"] = route(
            expect(f"302 302 302 {_a} {_s}", marker=_marked),
            **({} if _view in ("changelist", "add") else {"object_id": _model}),
        )
    ROUTES[f"admin/{_app}/{_name}/<path:object_id>/"] = route(
        expect("302 302 302 302 302"), object_id=_model
    )


def _walk(patterns, prefix: str = "", namespace: str = ""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif isinstance(pattern, URLPattern):
            route_text = prefix + str(pattern.pattern)
            key = f"{namespace}{pattern.name}" if pattern.name else route_text
            yield key, route_text


def project_routes() -> list[tuple[str, str]]:
    return list(_walk(get_resolver().url_patterns))


@pytest.fixture
def seed(superuser):
    release = ReleaseFactory()
    package = SourcePackageFactory(name="marked-tool")
    publication = PublicationFactory(source_package=package, release=release)
    bucket = ErrorBucketFactory(source_package=package)
    report = CrashReportFactory(
        bucket=bucket,
        source_package=package,
        release=release,
        version=publication.version,
        stack_trace=f"#0 {MARKER} ()\n#1 main ()",
        environment={"CMDLINE": f"/usr/bin/tool --{MARKER}"},
        package_versions={"libtool1": "1.0-1"},
    )
    problem = ProblemFactory(publication=publication, bucket=bucket)
    override = OverrideFactory(source_package=package, bucket=bucket, version="")
    event = PhasingEvent.objects.create(
        publication=publication,
        created_at=NOW + timedelta(hours=1),
        kind=EventKind.HALTED,
        old_percentage=10,
        new_percentage=0,
        old_state=PhasingState.PHASING,
        new_state=PhasingState.HALTED,
        reason=f"new problem {bucket}",
    )
    notification = Notification.objects.create(
        publication=publication,
        event=event,
        person=publication.signer,
        roles="signer",
        subject="halted",
        created_at=NOW,
    )
    sync = SourceSync.objects.create(name="simulator", kind="publications")
    endpoint = WebhookEndpoint.objects.create(name="team", url="https://hooks.example.org/")
    access = {
        "user_agent": "test",
        "ip_address": "127.0.0.1",
        "username": "x",
        "http_accept": "*/*",
        "path_info": "/",
    }
    objects = {
        "bucket": bucket,
        "report": report,
        "override": override,
        "publication": publication,
        "package": package,
        "user": superuser,
        "packages_publication": publication,
        "packages_phasingevent": event,
        "packages_release": release,
        "packages_policy": PolicyFactory(source_package=package),
        "packages_sourcepackage": package,
        "packages_person": publication.signer,
        "overview_errorbucket": bucket,
        "overview_crashreport": report,
        "overview_problem": problem,
        "overview_override": override,
        "overview_notification": notification,
        "packages_sourcesync": sync,
        "packages_scheduledchange": ScheduledChangeFactory(
            publication=publication, created_by=superuser
        ),
        "overview_webhookendpoint": endpoint,
        "overview_webhookdelivery": WebhookDelivery.objects.create(
            endpoint=endpoint, message_id="msg_1", notice_type="test", payload={}, created_at=NOW
        ),
        "packages_singlesignonidentity": SingleSignOnIdentity.objects.create(
            user=superuser, issuer="https://sso.example.org", subject="1"
        ),
        "auth_group": group_named(TRIAGERS),
        "auth_user": superuser,
        "axes_accessattempt": AccessAttempt.objects.create(
            **access, get_data="", post_data="", failures_since_start=1
        ),
        "axes_accesslog": AccessLog.objects.create(**access),
        "axes_accessfailurelog": AccessFailureLog.objects.create(**access),
    }
    values = {key: str(obj.pk) for key, obj in objects.items()}
    values["package_name"] = package.name
    values["package_content_type"] = str(ContentType.objects.get_for_model(package).pk)
    values["packages_app"] = "packages"
    values["action_name"] = "pause"
    return values


def _url(key: str, entry: Route, seed: dict[str, str]) -> str:
    kwargs = {param: seed[source] for param, source in entry.params.items()}
    if entry.path is not None:
        url = entry.path
    elif "/" not in key:
        url = reverse(key, kwargs=kwargs)
    else:
        url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: kwargs[m.group(1)], key)
    return f"{url}?{entry.query}" if entry.query else url


def test_every_route_has_an_entry_in_the_matrix():
    missing = sorted({key for key, _ in project_routes()} - set(ROUTES))
    assert not missing, "routes without a line in the permission matrix: " + ", ".join(missing)


def test_the_matrix_names_no_route_that_does_not_exist():
    stale = sorted(set(ROUTES) - {key for key, _ in project_routes()})
    assert not stale, "matrix lines for routes that do not exist: " + ", ".join(stale)


def test_every_route_answers_each_persona_as_expected_and_never_leaks_a_crash_report(
    seed, anonymous, member, triager, archive_admin, admin_client_superuser
):
    clients = dict(
        zip(
            PERSONAS,
            (anonymous, member, triager, archive_admin, admin_client_superuser),
            strict=True,
        )
    )
    for client in clients.values():
        # A crash in a view is one more wrong status in the report, not the end of the run.
        client.raise_request_exception = False
    problems: list[str] = []
    for key, _ in project_routes():
        entry = ROUTES.get(key)
        if entry is None:
            problems.append(f"{key}: no line in the matrix")
            continue
        url = _url(key, entry, seed)
        for persona, status in zip(PERSONAS, entry.expected.statuses, strict=True):
            response = clients[persona].get(url)
            body = b"".join(response) if response.streaming else response.content
            if response.status_code != status:
                problems.append(
                    f"{key} {url} as {persona}: {response.status_code}, expected {status}"
                )
            shows = MARKER.encode() in body
            if persona in entry.expected.marker and not shows:
                problems.append(f"{key} {url} as {persona}: the crash report content is missing")
            if shows and persona not in ("triager", "superuser"):
                problems.append(f"{key} {url} as {persona}: LEAKS crash report content")
    assert not problems, "\n".join(problems)
