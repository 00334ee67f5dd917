"""The update page in a browser: an archive admin pauses an update there, the overview's
row says paused; the controller halts it on a new problem; resuming it then waits for a
second archive admin, who reads the request's context on the page and approves it.
The page fits a 1,280 px window and a 390 px phone without scrolling sideways.

Drives Debian's Chromium through Playwright against pytest-django's live server.
"""

from __future__ import annotations

import re
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from overview.models import Verdict
from packages.models import EventKind, PhasingState, Publication, ScheduledAction, ScheduledChange
from packages.roles import ARCHIVE_ADMINS, TRIAGERS
from packages.services.changes import Change
from packages.services.phasing import publication_transition
from packages.services.scheduled import AWAITING_SIGN_OFF
from tests.browser.conftest import _new_page
from tests.conftest import group_named
from tests.factories import (
    AssessmentFactory,
    CrashReportFactory,
    ErrorBucketFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "browser-test-password-7730"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "update-page.png"


def _archive_admin(username: str):
    # A display name, which the pages show instead of the login name.
    user = UserFactory(
        username=username, first_name=username.title(), is_staff=True, password=PASSWORD
    )
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


def _log_in(page, live_server, username: str, then: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/?next={then}")
    page.fill('input[name="username"]', username)
    page.fill('input[name="password"]', PASSWORD)
    page.click('button[type="submit"]')
    page.wait_for_url(f"**{then}")


def _openssh_needing_openssl() -> Publication:
    """openssh at 20%, needing the openssl update at 30%, three days into phasing, with a
    verdict and the events that got it there."""
    noble = ReleaseFactory(codename="noble", version="24.04")
    now = timezone.now()
    published = now - timedelta(days=3)
    PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="openssl"),
        version="3.0.13-0ubuntu3.2",
        previous_version="3.0.13-0ubuntu3.1",
        binaries=["libssl3t64", "openssl"],
        phased_update_percentage=30,
        date_published=published,
    )
    openssh = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="openssh"),
        version="1:9.6p1-3ubuntu13.5",
        previous_version="1:9.6p1-3ubuntu13.4",
        binaries=["openssh-server", "openssh-client"],
        relations=[["depends", "openssh-server", "libssl3t64", ">=", "3.0.13-0ubuntu3.2"]],
        phased_update_percentage=20,
        date_published=published,
        closed_bugs=[2081234],
    )
    PhasingEventFactory(
        publication=openssh,
        created_at=published,
        kind=EventKind.PUBLISHED,
        old_percentage=None,
        new_percentage=10,
        reason="published at 10%",
    )
    PhasingEventFactory(
        publication=openssh,
        created_at=published + timedelta(days=1, hours=6),
        old_percentage=10,
        new_percentage=20,
    )
    AssessmentFactory(
        publication=openssh,
        verdict=Verdict.INSUFFICIENT,
        evidence="crash rate 1.1× (0.7–1.8×) the previous version's over 96 crash events: "
        "about 140 more needed to tell",
        share=0.14,
        share_low=0.08,
        share_high=0.22,
    )
    return openssh


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def _too_wide(page) -> list[str]:
    """The elements that reach past the window's right edge, for the failure's message."""
    return page.evaluate(
        """() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
        .slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' +
            Math.round(e.getBoundingClientRect().right))"""
    )


def test_an_admin_pauses_on_the_update_page_and_a_second_admin_signs_off_the_resume(
    live_server, chromium, artifacts, settings
):
    settings.PHASING_SIGN_OFF_REQUIRED = True
    _archive_admin("ada")
    _archive_admin("bo")
    openssh = _openssh_needing_openssl()
    update_url = f"/updates/{openssh.pk}/"
    context, page = _new_page(chromium, live_server, viewport=DESKTOP)
    try:
        _log_in(page, live_server, "ada", update_url)
        page.click("#action-pause summary")
        page.fill("#id_pause-reason", "Waiting on the openssl regression report, LP #2081299")
        page.click("#action-pause button[type=submit]")
        page.wait_for_url(f"**{update_url}")
        assert "Paused: openssh" in page.inner_text("ul.messages")
        assert "Paused" in page.inner_text(".update-status")
        page.screenshot(path=artifacts / "update-paused-1280.png", full_page=True)

        page.goto(f"{live_server.url}/")
        row = page.locator("table tbody tr", has_text="openssh").first
        assert re.search(r"paused", row.inner_text(), re.IGNORECASE)
        page.screenshot(path=artifacts / "update-overview-paused.png", full_page=True)

        # The controller halts it on a problem new in this version (its own service).
        bucket = ErrorBucketFactory(function="sshd_session_crash")
        ProblemFactory(publication=openssh, bucket=bucket, report_count=12, system_count=9)
        CrashReportFactory(
            bucket=bucket,
            source_package=openssh.source_package,
            release=openssh.release,
            version=openssh.version,
        )
        publication_transition(
            publication=Publication.objects.get(pk=openssh.pk),
            change=Change.halted(reason="new bucket sshd_session_crash", by_person=False),
        )
        page.goto(f"{live_server.url}/")
        row = page.locator("table tbody tr", has_text="openssh").first
        assert re.search(r"halted", row.inner_text(), re.IGNORECASE)

        page.goto(f"{live_server.url}{update_url}")
        page.click("#action-resume summary")
        page.fill("#id_resume-reason", "The crash is in the old sshd too; overridden upstream")
        page.click("#action-resume button[type=submit]")
        page.wait_for_url(f"**{update_url}")
        assert "waiting for a second archive admin's sign-off" in page.inner_text("ul.messages")
        assert PhasingState.HALTED == Publication.objects.get(pk=openssh.pk).state
    finally:
        context.close()

    change = ScheduledChange.objects.get(publication=openssh)
    for viewport, name in ((DESKTOP, "1280"), (PHONE, "390")):
        context, second = _new_page(chromium, live_server, viewport=viewport)
        try:
            _log_in(second, live_server, "bo", update_url)
            sign_off = second.locator(f"#sign-off-{change.pk}")
            text = sign_off.inner_text()
            # What, why, by whom, and the evidence, before deciding.
            assert "Resume" in text and "asked by Ada" in text
            assert "overridden upstream" in text and "crash rate 1.1×" in text
            assert _fits(second), f"scrolls sideways at {name} px: {_too_wide(second)}"
            second.screenshot(path=artifacts / f"update-page-{name}.png", full_page=True)
            if name == "1280":
                DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(artifacts / "update-page-1280.png", DOCS_SCREENSHOT)
                continue
            second.fill(f"#sign-off-{change.pk}-reason", "Checked the bucket: not this update")
            second.click(f"#sign-off-{change.pk} button[value=approve]")
            second.wait_for_url(f"**{update_url}")
            assert "Signed off and done" in second.inner_text("ul.messages")
            events = second.inner_text("table.update-events")
            assert "requested by Ada" in events and "signed off by Bo" in events
            assert "Checked the bucket" in events
            assert _fits(second)
            second.screenshot(path=artifacts / "update-signed-off-390.png", full_page=True)
        finally:
            context.close()
    openssh.refresh_from_db()
    assert openssh.state == PhasingState.PHASING


def test_the_update_page_fits_a_phone_for_anyone(live_server, chromium, artifacts):
    openssh = _openssh_needing_openssl()
    context, page = _new_page(chromium, live_server, viewport=PHONE, is_mobile=True)
    try:
        page.goto(f"{live_server.url}/updates/{openssh.pk}/")
        assert "openssl 3.0.13-0ubuntu3.2 is at 30%" in page.inner_text(".update-warnings")
        assert page.locator("#actions").count() == 0
        assert _fits(page)
        page.screenshot(path=artifacts / "update-page-anonymous-390.png", full_page=True)
    finally:
        context.close()


def _serious_violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{violation['id']} ({violation['impact']}): {node['target']}"
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
        for node in violation["nodes"]
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_update_page_passes_the_accessibility_check_for_admins_and_triagers(
    live_server, chromium, artifacts, settings, viewport, scheme
):
    settings.PHASING_SIGN_OFF_REQUIRED = True
    asker = _archive_admin("ada")
    _archive_admin("bo")
    triager = UserFactory(username="tess", password=PASSWORD)
    triager.groups.add(group_named(TRIAGERS))
    openssh = _openssh_needing_openssl()
    problem = ProblemFactory(publication=openssh, report_count=3, system_count=3)
    CrashReportFactory(
        bucket=problem.bucket,
        source_package=openssh.source_package,
        release=openssh.release,
        version=openssh.version,
    )
    ScheduledChangeFactory(
        publication=openssh,
        action=ScheduledAction.RELEASE,
        run_at=timezone.now(),
        created_by=asker,
        reason="Fixes CVE-2026-0002",
        outcome=AWAITING_SIGN_OFF,
    )
    update_url = f"/updates/{openssh.pk}/"
    problems = {}
    for username in ("bo", "tess"):
        context, page = _new_page(
            chromium,
            live_server,
            viewport=viewport,
            color_scheme=scheme,
            is_mobile=viewport is PHONE,
        )
        try:
            _log_in(page, live_server, username, update_url)
            if username == "bo":
                page.click("#action-set summary")  # an open form is checked too
            problems[username] = _serious_violations(page)
            assert _fits(page), f"scrolls sideways: {_too_wide(page)}"
            name = f"{username}-{scheme}-{viewport['width']}"
            page.screenshot(path=artifacts / f"update-page-{name}.png", full_page=True)
            # The top of the page as a phone shows it, at its own size.
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=artifacts / f"update-page-{name}-top.png")
            if username == "bo":
                page.locator("#actions").screenshot(path=artifacts / f"update-actions-{name}.png")
        finally:
            context.close()
    assert {name: found for name, found in problems.items() if found} == {}
