"""Every route as every role, over an archive whose names and texts come from a hostile
source: slashes, markup, formulas, javascript: links, NUL bytes and 10 kB strings.

The hostile records go in through the boundaries (the publication sync, the crash
ingest, the controller's crash answers, people's reasons), plus rows from before names
were checked, written straight to the database. No answer is a 5xx, and nothing from
the source is ever active on a page: no script, no handler, no javascript: link, no
formula in an export; data (JSON, CSV, feeds) is sent as data that no browser sniffs
into a page.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta

import pytest

from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashAnswer, CrashReportRecord, ProblemRecord
from overview.models import ErrorBucket, Problem
from overview.triage.overrides import override_create
from packages.models import Publication, Release, SourcePackage
from packages.services import publication_pause, release_freeze
from packages.services.sync import publications_sync
from packages.sources.base import PersonRecord, PublicationRecord
from tests.overview.controller.fakes import ScriptedCrashes, tick
from tests.packages.services.sync_fakes import ListSource
from tests.test_permission_matrix import (  # noqa: F401 (seed is a fixture)
    PERSONAS,
    ROUTES,
    _url,
    project_routes,
    seed,
)

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
HANDLER = '<img src=x onerror="alert(2)">'
FORMULA = '=HYPERLINK("http://evil.example","click")'
LINK = "javascript:alert(3)"
LONG = "A" * 10_000
HOSTILE_TEXTS = (SCRIPT, HANDLER, FORMULA, f"{SCRIPT}{LONG}", "slash/ed", "nul\x00led")
ACTIVE = re.compile(
    r"<script>alert|<img src=x onerror|href=[\"']\s*javascript:|src=[\"']\s*javascript:", re.I
)


def hostile_world(now) -> list[str]:
    """Hostile records through every door; the extra URLs they have pages at."""
    good = dict(date_published=now - timedelta(days=2), phased_update_percentage=10)
    records = [
        PublicationRecord("noble", "evil/name", "1.0-1", **good),
        PublicationRecord("noble", SCRIPT, "1.0-1", **good),
        PublicationRecord("noble", "x" * 10_000, "1.0-1", **good),
        PublicationRecord("noble", "nul\x00", "1.0-1", **good),
        PublicationRecord("noble", "calc", FORMULA, **good),
        PublicationRecord("noble", "future", "1.0-1", now.replace(year=9999), 10),
        PublicationRecord(
            "noble",
            "hostile",
            "1.0-1ubuntu0.1",
            previous_version="1.0-1",
            signer=PersonRecord("mallory", name=f"{SCRIPT}{HANDLER}", email="m@example.org"),
            **good,
        ),
    ]
    summary = publications_sync(ListSource(records), now=now)
    assert summary.new == 1 and len(summary.errors) == len(records) - 1

    publication = Publication.objects.get(source_package__name="hostile")
    crash_reports_ingest(
        [
            CrashReportRecord(
                external_id=f"hostile-{n}",
                signature=f"{SCRIPT}:{n}" if n % 2 else f"{FORMULA}/{n}",
                release="noble",
                source_package=package,
                version="1.0-1ubuntu0.1",
                architecture="amd64",
                reported_at=now - timedelta(hours=1),
                system_id=f"system-{n}",
                stack_trace=f"#0 {HANDLER} ()\n{LONG}",
                function=text if "\x00" not in text else "nul",
                web_link=LINK,
                environment={"CMDLINE": text},
            )
            for n, (package, text) in enumerate(
                [("hostile", t) for t in HOSTILE_TEXTS] + [("evil/name", SCRIPT)]
            )
        ],
        now=now,
    )
    crashes = ScriptedCrashes()
    crashes.answers["hostile"] = CrashAnswer(
        problems=(
            ProblemRecord(
                kind="new_bucket",
                signature=f"{SCRIPT}{FORMULA}",
                function=FORMULA,
                web_link=LINK,
                system_count=5,
            ),
            ProblemRecord(kind="increased_rate", web_link=LINK, report_count=9, difference=4.0),
        )
    )
    tick(crashes, now)
    assert Problem.objects.filter(publication=publication).count() == 2

    # Rows from before names were checked: a slash in a name, markup in a codename.
    legacy = Publication.objects.create(
        source_package=SourcePackage.objects.create(name="legacy/slash"),
        release=Release.objects.create(codename="old", version="9.9"),
        version="1.0-1",
        date_published=now - timedelta(days=1),
        phased_update_percentage=20,
    )
    ErrorBucket.objects.create(signature=f"legacy {SCRIPT}", function=HANDLER, web_link=LINK)

    from tests.factories import UserFactory

    admin = UserFactory(username="ops")
    other = Publication.objects.exclude(pk=legacy.pk).exclude(source_package__name="hostile")
    publication_pause(publication=other.first(), actor=admin, reason=f"{HANDLER}{FORMULA}")
    release_freeze(release=legacy.release, actor=admin, reason=SCRIPT)
    override_create(
        source_package=publication.source_package,
        version="",
        kind="increased_rate",
        bucket=None,
        actor=admin,
        reason=f"{SCRIPT} {FORMULA}",
    )
    buckets = ErrorBucket.objects.values_list("pk", flat=True)
    reports = publication.source_package.crash_reports.values_list("pk", flat=True)
    return [
        "/",
        "/?_export=csv",
        "/?_export=json",
        "/source/hostile/",
        "/source/legacy/slash/",
        f"/source/{SCRIPT}/",
        "/feeds/halts/",
        "/feeds/changes/",
        "/api/v1/publications/",
        "/api/v1/problems/",
        f"/api/v1/publications/{publication.pk}/events/",
        "/overrides/",
        "/overrides/?show=all",
        "/admin/packages/publication/",
        f"/admin/packages/publication/{publication.pk}/change/",
        "/admin/packages/phasingevent/",
        "/admin/overview/errorbucket/",
        "/admin/overview/problem/",
        "/admin/overview/override/",
        "/admin/overview/crashreport/",
        "/admin/packages/person/",
        "/machine/?machine_id=0123456789abcdef0123456789abcdef",
        *[f"/problems/{pk}/" for pk in buckets],
        *[f"/problems/{pk}/reports/" for pk in buckets],
        *[f"/api/v1/problems/{pk}/" for pk in buckets],
        *[f"/reports/{pk}/" for pk in reports],
    ]


def test_every_route_as_every_role_over_hostile_data_answers_no_5xx_and_runs_nothing(
    seed,  # noqa: F811 (the permission matrix's objects, one of each, as the fixture)
    anonymous,
    member,
    triager,
    archive_admin,
    admin_client_superuser,
    frozen_now,
):
    extra = hostile_world(frozen_now)
    clients = dict(
        zip(
            PERSONAS,
            (anonymous, member, triager, archive_admin, admin_client_superuser),
            strict=True,
        )
    )
    urls = [_url(key, ROUTES[key], seed) for key, _ in project_routes()] + extra
    problems = []
    for persona, client in clients.items():
        client.raise_request_exception = False
        for url in urls:
            response = client.get(url)
            body = (b"".join(response) if response.streaming else response.content).decode()
            # /healthz answers 503 by design while crash data is stale (none is fresh here).
            unhealthy = url.startswith("/healthz") and response.status_code == 503
            if response.status_code >= 500 and not unhealthy:
                problems.append(f"{url} as {persona}: {response.status_code}")
            kind = response.get("Content-Type", "")
            if kind.startswith("text/html") and ACTIVE.search(body):
                problems.append(f"{url} as {persona}: active content {ACTIVE.search(body)[0]!r}")
            elif (
                not kind.startswith("text/html")
                and response.get("X-Content-Type-Options") != "nosniff"
            ):  # data (JSON, CSV, Atom) a browser must never read as a page
                problems.append(f"{url} as {persona}: {kind} without nosniff")
            if "_export=csv" in url and response.status_code == 200:
                for row in csv.reader(io.StringIO(body)):
                    formulas = [cell for cell in row if cell[:1] in ("=", "+", "-", "@")]
                    if formulas:
                        problems.append(f"{url} as {persona}: a formula {formulas[0][:40]!r}")
    assert not problems, "\n".join(problems[:40])
