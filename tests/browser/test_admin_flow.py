"""An archive admin pauses and resumes an update in the admin, and sees it on the history page.

Drives Debian's Chromium through Playwright against pytest-django's live server.
"""

from __future__ import annotations

import pytest

from packages.models import EventKind, PhasingState
from packages.roles import ARCHIVE_ADMINS
from tests.conftest import group_named
from tests.factories import PublicationFactory, SourcePackageFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "browser-test-password-4417"


@pytest.fixture
def page(browser_page):
    return browser_page


def _run_action(page, live_server, artifacts, publication, action: str, reason: str) -> None:
    page.goto(f"{live_server.url}/admin/packages/publication/?q={publication.source_package.name}")
    page.check(f'input[name="_selected_action"][value="{publication.pk}"]')
    page.select_option('select[name="action"]', action)
    page.click('button[name="index"]')
    page.wait_for_selector('textarea[name="reason"]')
    page.screenshot(path=artifacts / f"admin-{action}-reason.png", full_page=True)
    page.fill('textarea[name="reason"]', reason)
    page.click('input[name="_confirm"]')
    page.wait_for_selector("ul.messagelist")


def test_an_archive_admin_pauses_and_resumes_an_update_and_sees_it_on_the_history_page(
    live_server, page, artifacts
):
    admin = UserFactory(
        username="ada", first_name="Ada", last_name="Lovelace", is_staff=True, password=PASSWORD
    )
    admin.groups.add(group_named(ARCHIVE_ADMINS))
    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="hello"),
        version="2.10-3ubuntu0.1",
        phased_update_percentage=30,
    )

    page.goto(f"{live_server.url}/accounts/login/?next=/admin/packages/publication/")
    page.fill('input[name="username"]', "ada")
    page.fill('input[name="password"]', PASSWORD)
    page.click('button[type="submit"]')
    page.wait_for_url("**/admin/packages/publication/")
    assert "2.10-3ubuntu0.1" in page.content()

    _run_action(page, live_server, artifacts, publication, "pause", "Waiting on LP: #2099999")
    messages = page.inner_text("ul.messagelist")
    assert "Paused" in messages and "hello" in messages
    page.screenshot(path=artifacts / "admin-paused.png", full_page=True)

    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    assert publication.phased_update_percentage == 30

    page.goto(f"{live_server.url}/source/hello/")
    pause_row = page.locator(f"tr.event-{EventKind.PAUSED}").first
    row_text = pause_row.inner_text()
    assert "Ada Lovelace" in row_text  # the display name, never the login name
    assert "Waiting on LP: #2099999" in row_text
    event = publication.events.get(kind=EventKind.PAUSED)
    assert event.created_at.strftime("%Y-%m-%d") in row_text
    page.screenshot(path=artifacts / "history-paused.png", full_page=True)

    _run_action(page, live_server, artifacts, publication, "resume", "Fix verified, carry on")
    assert "Resumed" in page.inner_text("ul.messagelist")
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING

    page.goto(f"{live_server.url}/source/hello/")
    resumed = page.locator(f"tr.event-{EventKind.RESUMED}").first.inner_text()
    assert "Ada Lovelace" in resumed and "Fix verified, carry on" in resumed
    page.screenshot(path=artifacts / "history-resumed.png", full_page=True)
