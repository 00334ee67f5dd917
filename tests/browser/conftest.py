"""Browser tests: Debian's Chromium driven by Playwright against pytest-django's live server.

Never a downloaded browser: the project's setup installs the Debian package `chromium`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from
# a thread with a running loop unless told that these synchronous ones are safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

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


@pytest.fixture(scope="session")
def chromium():
    # CI sets PHASING_REQUIRE_BROWSER so a missing browser fails instead of skipping.
    required = os.environ.get("PHASING_REQUIRE_BROWSER", "") not in ("", "0")
    if not Path(CHROMIUM).exists():
        if required:
            pytest.fail(f"{CHROMIUM} is not installed (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is not installed")
    try:
        import playwright.sync_api as playwright_sync
    except ImportError:
        if required:
            raise
        pytest.skip("playwright is not installed")
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright_sync.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def _new_page(chromium, live_server, **context_options):
    context = chromium.new_context(base_url=live_server.url, **context_options)
    # Only the live server: a page that reaches out anywhere else fails the test.
    context.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith(live_server.url) else route.abort()
        ),
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    return context, page


@pytest.fixture
def browser_page(chromium, live_server):
    context, page = _new_page(chromium, live_server, viewport={"width": 1366, "height": 900})
    yield page
    context.close()


@pytest.fixture
def phone_page(chromium, live_server):
    context, page = _new_page(
        chromium, live_server, viewport={"width": 390, "height": 844}, is_mobile=True
    )
    yield page
    context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
