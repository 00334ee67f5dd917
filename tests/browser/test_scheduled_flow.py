"""Scheduled changes and sign-off in a browser: an archive admin schedules a pause, sees it
on the public pages, the task runs it at its time; a release to everyone waits for a second
archive admin, who signs it off in the admin, and the history names both.

Drives Debian's Chromium through Playwright against pytest-django's live server.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from packages.models import EventKind, PhasingState, ScheduledChange
from packages.roles import ARCHIVE_ADMINS
from packages.services.scheduled import scheduled_changes_run_due
from tests.browser.conftest import _new_page
from tests.conftest import group_named
from tests.factories import PublicationFactory, SourcePackageFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "browser-test-password-5521"


def _archive_admin(username: str):
    # Pages name a person by display name, never by login name.
    user = UserFactory(
        username=username, first_name=username.title(), is_staff=True, password=PASSWORD
    )
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


def _log_in(page, live_server, username: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/?next=/admin/")
    page.fill('input[name="username"]', username)
    page.fill('input[name="password"]', PASSWORD)
    page.click('button[type="submit"]')
    page.wait_for_url("**/admin/")


def _act(page, url: str, pk: int, action: str, reason: str, run_at: str = "") -> str:
    page.goto(url)
    page.check(f'input[name="_selected_action"][value="{pk}"]')
    page.select_option('select[name="action"]', action)
    page.click('button[name="index"]')
    page.fill('textarea[name="reason"]', reason)
    if run_at:
        page.fill('input[name="run_at"]', run_at)
    page.click('input[name="_confirm"]')
    page.wait_for_selector("ul.messagelist")
    return page.inner_text("ul.messagelist")


def test_a_scheduled_pause_shows_on_the_pages_and_runs_at_its_time(
    live_server, browser_page, artifacts
):
    _archive_admin("ada")
    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="hello"), version="2.10-3ubuntu0.1"
    )
    when = (timezone.now() + timedelta(hours=3)).replace(second=0, microsecond=0)
    page = browser_page
    _log_in(page, live_server, "ada")

    messages = _act(
        page,
        f"{live_server.url}/admin/packages/publication/",
        publication.pk,
        "pause",
        "Hold over the archive maintenance",
        run_at=f"{when:%Y-%m-%d %H:%M}",
    )
    assert f"scheduled for {when:%Y-%m-%d %H:%M} UTC" in messages

    page.goto(f"{live_server.url}/source/hello/")
    scheduled = page.inner_text("table.scheduled")
    assert "Pause" in scheduled and "Hold over the archive maintenance" in scheduled
    page.screenshot(path=artifacts / "history-scheduled.png", full_page=True)
    assert "Hold over the archive maintenance" in page.goto(f"{live_server.url}/").text()

    scheduled_changes_run_due(now=when)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    page.goto(f"{live_server.url}/source/hello/")
    paused = page.locator(f"tr.event-{EventKind.PAUSED}").first.inner_text()
    assert "scheduled by Ada" in paused and f"ran at {when:%Y-%m-%d %H:%M} UTC" in paused
    assert page.locator("table.scheduled").count() == 0


def test_a_release_waits_for_a_second_archive_admin_who_signs_it_off(
    live_server, browser_page, chromium, artifacts, settings
):
    settings.PHASING_SIGN_OFF_REQUIRED = True
    _archive_admin("ada")
    _archive_admin("bo")
    publication = PublicationFactory(source_package=SourcePackageFactory(name="openssl"))
    _log_in(browser_page, live_server, "ada")

    messages = _act(
        browser_page,
        f"{live_server.url}/admin/packages/publication/",
        publication.pk,
        "release_to_everyone",
        "Fixes CVE-2026-0001",
    )
    assert "awaiting a second archive admin's sign-off" in messages
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10

    context, second = _new_page(chromium, live_server, viewport={"width": 1366, "height": 900})
    try:
        _log_in(second, live_server, "bo")
        change = ScheduledChange.objects.get()
        messages = _act(
            second,
            f"{live_server.url}/admin/packages/scheduledchange/",
            change.pk,
            "sign_off",
            "Checked the CVE fix",
        )
        second.screenshot(path=artifacts / "admin-signed-off.png", full_page=True)
    finally:
        context.close()
    assert "Signed off" in messages

    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (
        100,
        PhasingState.COMPLETE,
    )
    browser_page.goto(f"{live_server.url}/source/openssl/")
    released = browser_page.locator(f"tr.event-{EventKind.RELEASED}").first.inner_text()
    assert "requested by Ada" in released and "signed off by Bo" in released
