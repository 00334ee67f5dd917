"""A page people keep open, in Debian's Chromium at a 1,400 px desktop and a 390 px phone:
it fits, says the zone of its times, draws charts that are labelled and not clipped (also
without JavaScript), has a dark mode, and every public page passes axe-core's
accessibility check with no serious or critical violation, in both colour schemes.

axe-core comes with axe-playwright-python (nothing is downloaded); Playwright's evaluate
injects it through the DevTools protocol, which the site's Content-Security-Policy does
not block, so the pages are checked with the policy they send to every visitor.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from overview.triage.views import OVERRIDES_PER_PAGE
from packages.roles import TRIAGERS
from tests.browser.polish_archive import FREEZE_REASON, polish_archive
from tests.conftest import group_named
from tests.factories import OverrideFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
MACHINE_ID = "4c4c4544004a4d1080345ac04f565232"
PASSWORD = "browser-test-password-5120"


@pytest.fixture
def world():
    return polish_archive()


def _context(chromium, live_server, viewport, **options):
    context = chromium.new_context(
        base_url=live_server.url, viewport=viewport, is_mobile=viewport is PHONE, **options
    )
    context.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith(live_server.url) else route.abort()
        ),
    )
    return context


def _public_pages(world) -> list[str]:
    return [
        "/",
        "/?sort=-percentage",
        "/source/mutter/?release=noble",
        f"/problems/{world['buckets'][0].pk}/",
        "/machine/",
        f"/machine/?machine_id={MACHINE_ID}&release=noble",
        "/sources/",
        "/api/v1/docs",
    ]


def _serious_violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{violation['id']} ({violation['impact']}): {node['target']}"
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
        for node in violation["nodes"]
    ]


def _duplicate_ids(page) -> list[str]:
    return page.evaluate(
        """() => {
            const seen = {};
            for (const element of document.querySelectorAll('[id]')) {
                seen[element.id] = (seen[element.id] || 0) + 1;
            }
            return Object.keys(seen).filter((id) => seen[id] > 1);
        }"""
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_public_page_passes_the_accessibility_check(
    chromium, live_server, world, viewport, scheme, artifacts
):
    context = _context(chromium, live_server, viewport, color_scheme=scheme)
    page = context.new_page()
    problems = {}
    for url in _public_pages(world):
        response = page.goto(url)
        # The check runs under the policy real visitors get.
        assert "script-src 'self'" in response.headers["content-security-policy"]
        if url.startswith("/api/"):
            page.wait_for_selector(".opblock-summary-path")
            # an operation with parameters, opened
            page.click(".opblock-summary-control:has([data-path='/api/v1/publications/'])")
            page.wait_for_selector("tr[data-param-name] select[aria-label]")
        problems[url] = _serious_violations(page) + [
            f"duplicate id {name}" for name in _duplicate_ids(page)
        ]
    page.screenshot(path=artifacts / f"polish-api-docs-{scheme}-{viewport['width']}.png")
    context.close()
    assert {url: found for url, found in problems.items() if found} == {}


def test_the_overview_fits_a_1400_px_window_and_says_what_a_person_must_look_at(
    chromium, live_server, world, artifacts
):
    context = _context(chromium, live_server, DESKTOP)
    page = context.new_page()
    for url in ("/", "/?sort=-percentage"):  # grouped by release, and with a Release column
        page.goto(url)
        wrap = page.locator(".table-wrap").first
        widths = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
        assert widths[0] <= widths[1], f"{url}: the table scrolls sideways ({widths})"
        problems = page.locator("table.updates thead th", has_text="Problems").bounding_box()
        verdicts = page.locator("table.updates thead th", has_text="Verdict").bounding_box()
        box = wrap.bounding_box()
        assert problems["x"] + problems["width"] <= box["x"] + box["width"]
        assert verdicts["x"] + verdicts["width"] <= box["x"] + box["width"]
    page.goto("/")
    page.screenshot(path=artifacts / "polish-overview-1400.png", full_page=True)

    # The halted update is named at the top, with its problem and how long ago.
    attention = page.locator("section.attention").inner_text()
    assert "mutter" in attention and "clutter_actor_paint" in attention and "ago" in attention
    # The summaries count what needs a person, and a frozen release says why.
    noble = page.locator(".summary", has_text="noble").inner_text()
    jammy = page.locator(".summary", has_text="jammy").inner_text()
    assert "4 updates in phasing: 1 halted, 1 paused" in noble
    assert "frozen" in jammy and FREEZE_REASON in jammy
    assert FREEZE_REASON in page.locator("tr.group", has_text="jammy").inner_text()
    context.close()


def test_the_overview_reads_on_a_phone(chromium, live_server, world, artifacts):
    context = _context(chromium, live_server, PHONE)
    page = context.new_page()
    page.goto("/")
    page.screenshot(path=artifacts / "polish-overview-390.png", full_page=True)

    page.locator("table.updates tbody tr.line", has_text="mutter").screenshot(
        path=artifacts / "polish-overview-390-row.png"
    )
    page.locator(".summaries").screenshot(path=artifacts / "polish-summaries-390.png")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    # The caption spans the table, not squeezed into a column.
    caption = page.locator("table.updates caption").bounding_box()
    table = page.locator("table.updates").bounding_box()
    assert caption["width"] >= table["width"] - 2
    # No cell runs off the screen, long names and versions included.
    rights = page.eval_on_selector_all(
        "table.updates tr.line > *", "cells => cells.map(c => c.getBoundingClientRect().right)"
    )
    assert max(rights) <= PHONE["width"]
    context.close()


def _chart_report(page) -> dict:
    return page.eval_on_selector(
        "svg.phasing-chart",
        """svg => {
            const box = svg.getBoundingClientRect();
            const texts = [...svg.querySelectorAll('text')].map(t => {
                const r = t.getBoundingClientRect();
                return {text: t.textContent, left: r.left, right: r.right, top: r.top,
                        bottom: r.bottom, height: r.height};
            });
            const flags = [...svg.querySelectorAll('g.halt, g.pause, g.resume')].map(
                g => [g.getAttribute('class'), g.querySelector('text').textContent]);
            return {box: {left: box.left, right: box.right, top: box.top, bottom: box.bottom},
                    texts, flags};
        }""",
    )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_history_chart_is_labelled_unclipped_and_readable(
    chromium, live_server, world, viewport, artifacts
):
    context = _context(chromium, live_server, viewport)
    page = context.new_page()
    page.goto("/source/mutter/?release=noble")
    page.locator("figure.chart").first.screenshot(
        path=artifacts / f"polish-chart-{viewport['width']}.png"
    )
    chart = _chart_report(page)

    # The halt, the resume and the second halt are marked and labelled.
    assert chart["flags"] == [
        ["halt", "halted"],
        ["resume", "resumed"],
        ["halt", "halted again"],
    ]
    # No text is cut off at any edge of the chart.
    box = chart["box"]
    for text in chart["texts"]:
        assert box["left"] - 0.5 <= text["left"] and text["right"] <= box["right"] + 0.5, text
        assert box["top"] - 0.5 <= text["top"] and text["bottom"] <= box["bottom"] + 0.5, text
    # Axis text is at least 9 px high on the screen, on a phone too.
    ticks = [t for t in chart["texts"] if t["text"].endswith("%")]
    assert ticks and min(t["height"] for t in ticks) >= 9
    # The legend names what the chart shows, and nothing else (no pause here).
    legend = page.locator("figure.chart .legend li").all_inner_texts()
    assert [item.strip() for item in legend] == ["percentage", "halt", "resume"]
    context.close()


def test_the_chart_reads_without_javascript(chromium, live_server, world):
    context = _context(chromium, live_server, DESKTOP, java_script_enabled=False)
    page = context.new_page()
    page.goto("/source/mutter/?release=noble")
    chart = page.locator("svg.phasing-chart")
    assert chart.is_visible()
    assert chart.bounding_box()["height"] > 150
    assert "halted again" in chart.locator("g.halt text").all_text_contents()
    assert page.locator("figure.chart .legend").is_visible()
    context.close()


def test_dark_mode_follows_the_system_setting(chromium, live_server, world, artifacts):
    colours = {}
    for scheme in ("light", "dark"):
        context = _context(chromium, live_server, DESKTOP, color_scheme=scheme)
        page = context.new_page()
        page.goto("/")
        page.screenshot(path=artifacts / f"polish-overview-{scheme}.png")
        colours[scheme] = page.evaluate(
            """() => {
                const rgb = (el) => getComputedStyle(el).backgroundColor.match(/\\d+/g).map(Number);
                const luminance = ([r, g, b]) => (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
                return {
                    page: luminance(rgb(document.documentElement)),
                    table: luminance(rgb(document.querySelector('table.updates thead th'))),
                };
            }"""
        )
        context.close()
    assert colours["light"]["page"] > 0.9 and colours["dark"]["page"] < 0.15
    assert colours["dark"]["table"] < 0.25


def test_the_site_has_an_icon(chromium, live_server, world):
    context = _context(chromium, live_server, DESKTOP)
    page = context.new_page()
    page.goto("/")
    href = page.get_attribute("link[rel='icon']", "href")
    icon = page.request.get(href)
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    old_style = page.request.get("/favicon.ico")
    assert old_style.status == 200 and old_style.url.endswith(".svg")
    context.close()


def test_a_package_has_its_own_feed_linked_from_its_history(chromium, live_server, world):
    context = _context(chromium, live_server, DESKTOP)
    page = context.new_page()
    page.goto("/source/mutter/?release=noble")
    href = page.get_attribute("a:text('Atom feed of mutter')", "href")
    feed = page.request.get(href)
    assert feed.status == 200
    assert "mutter 46.2-1ubuntu0.24.04.13 (noble): halted, 40% → 0%" in feed.text()
    assert "coreutils" not in feed.text()
    for bad in ("?package=%3Cscript%3E", "?package=nosuchpackage", "?package=" + "x" * 300):
        assert 400 <= page.request.get(f"/feeds/changes/{bad}").status < 500
    context.close()


def test_a_triager_overrides_from_a_report_with_its_version_filled_in(
    chromium, live_server, world, artifacts
):
    triager = UserFactory(username="tria", password=PASSWORD)
    triager.groups.add(group_named(TRIAGERS))
    report, bucket = world["report"], world["buckets"][0]
    for n in range(OVERRIDES_PER_PAGE + 1):
        OverrideFactory(bucket=bucket, source_package=report.source_package, version=f"0.{n}")
    context = _context(chromium, live_server, DESKTOP)
    page = context.new_page()
    page.goto(f"/accounts/login/?next={reverse('triage:report', args=[report.pk])}")
    page.fill("input[name='username']", "tria")
    page.fill("input[name='password']", PASSWORD)
    page.click("form button[type='submit'], form input[type='submit']")
    page.wait_for_url(f"**{reverse('triage:report', args=[report.pk])}")

    page.click(f"a:text('Override this problem for mutter {report.version}')")
    page.wait_for_url("**#override")
    assert page.input_value("#override_version") == report.version
    assert page.input_value("#override_source_package") == str(report.source_package.pk)
    # The reports' filter and the override form no longer share an id.
    assert _duplicate_ids(page) == []
    assert page.locator("#id_version").count() == 1
    assert _serious_violations(page) == []
    page.screenshot(path=artifacts / "polish-override-prefilled.png", full_page=True)

    # The overrides page is paginated.
    page.goto(reverse("triage:overrides"))
    assert page.locator("table tbody tr").count() == OVERRIDES_PER_PAGE
    page.click("nav.pagination a[rel='next']")
    page.wait_for_url("**page=2")
    assert page.locator("table tbody tr").count() == 1
    assert _serious_violations(page) == []
    context.close()
