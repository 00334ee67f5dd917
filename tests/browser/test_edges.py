"""The edges of the site in Chromium: the feeds page and the error pages fit a 390 px phone
and a desktop, in both colour schemes, with no serious or critical axe violation."""

from __future__ import annotations

import pytest

from tests.browser.test_polish import DESKTOP, PHONE, _context, _serious_violations
from tests.conftest import _client_for
from tests.factories import CrashReportFactory, ReleaseFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_feeds_and_error_pages_fit_and_pass_the_accessibility_check(
    chromium, live_server, viewport, scheme, artifacts
):
    for codename, version in (("noble", "24.04"), ("jammy", "22.04")):
        ReleaseFactory(codename=codename, version=version)
    report = CrashReportFactory()
    member = _client_for(UserFactory(username="member-browser"))
    context = _context(chromium, live_server, viewport, color_scheme=scheme)
    cookie = member.cookies["sessionid"]
    page = context.new_page()
    problems = {}
    for url, status, signed_in in (
        ("/feeds/", 200, False),
        ("/no/such/page/", 404, False),
        (f"/reports/{report.pk}/", 403, True),
    ):
        if signed_in:
            context.add_cookies(
                [{"name": "sessionid", "value": cookie.value, "url": live_server.url}]
            )
        response = page.goto(url)
        assert response.status == status, url
        width = page.evaluate("document.documentElement.scrollWidth")
        problems[url] = _serious_violations(page) + (
            [f"scrolls sideways: {width} px"] if width > viewport["width"] else []
        )
    page.screenshot(path=artifacts / f"edges-403-{scheme}-{viewport['width']}.png")
    context.close()
    assert {url: found for url, found in problems.items() if found} == {}
