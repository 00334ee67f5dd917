"""An archive admin pauses and resumes an update in the admin, and sees it on the history page.

Drives Debian's Chromium through Playwright against pytest-django's live server.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; the ORM calls of the test
# itself are still plain synchronous ones.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from django.contrib.auth.models import Group, Permission  # noqa: E402

from overview.roles import ARCHIVE_ADMINS, GROUP_PERMISSIONS  # noqa: E402
from packages.models import EventKind, PhasingState  # noqa: E402
from tests.factories import PublicationFactory, SourcePackageFactory, UserFactory  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PASSWORD = "browser-test-password-4417"


def _archive_admins() -> Group:
    """The group as the data migration makes it; a transactional test may have flushed it."""
    group, _ = Group.objects.get_or_create(name=ARCHIVE_ADMINS)
    for code in GROUP_PERMISSIONS[ARCHIVE_ADMINS]:
        app_label, codename = code.split(".")
        group.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )
    return group


@pytest.fixture
def page():
    playwright_sync = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright_sync.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(15_000)
        yield page
        context.close()
        browser.close()


def _run_action(page, live_server, publication, action: str, reason: str) -> None:
    page.goto(f"{live_server.url}/admin/packages/publication/?q={publication.source_package.name}")
    page.check(f'input[name="_selected_action"][value="{publication.pk}"]')
    page.select_option('select[name="action"]', action)
    page.click('button[name="index"]')
    page.wait_for_selector('textarea[name="reason"]')
    page.screenshot(path=ARTIFACTS / f"admin-{action}-reason.png", full_page=True)
    page.fill('textarea[name="reason"]', reason)
    page.click('input[name="_confirm"]')
    page.wait_for_selector("ul.messagelist")


def test_an_archive_admin_pauses_and_resumes_an_update_and_sees_it_on_the_history_page(
    live_server, page
):
    admin = UserFactory(username="ada", is_staff=True, password=PASSWORD)
    admin.groups.add(_archive_admins())
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

    _run_action(page, live_server, publication, "pause", "Waiting on LP: #2099999")
    messages = page.inner_text("ul.messagelist")
    assert "Paused" in messages and "hello" in messages
    page.screenshot(path=ARTIFACTS / "admin-paused.png", full_page=True)

    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    assert publication.phased_update_percentage == 30

    page.goto(f"{live_server.url}/source/hello/")
    pause_row = page.locator(f"tr.event-{EventKind.PAUSED}").first
    row_text = pause_row.inner_text()
    assert "ada" in row_text
    assert "Waiting on LP: #2099999" in row_text
    event = publication.events.get(kind=EventKind.PAUSED)
    assert event.created_at.strftime("%Y-%m-%d") in row_text
    page.screenshot(path=ARTIFACTS / "history-paused.png", full_page=True)

    _run_action(page, live_server, publication, "resume", "Fix verified, carry on")
    assert "Resumed" in page.inner_text("ul.messagelist")
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING

    page.goto(f"{live_server.url}/source/hello/")
    resumed = page.locator(f"tr.event-{EventKind.RESUMED}").first.inner_text()
    assert "ada" in resumed and "Fix verified, carry on" in resumed
    page.screenshot(path=ARTIFACTS / "history-resumed.png", full_page=True)
