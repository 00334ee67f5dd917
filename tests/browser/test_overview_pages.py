"""The overview, history and machine pages in Debian's Chromium at 1,280×800 and 390×844,
light and dark: nothing scrolls sideways, 25 lines fit in about 1,600 px at desktop width,
and axe-core finds no serious or critical violation. Screenshots go to
test-artifacts/screenshots/."""

from __future__ import annotations

import pytest

from tests.browser.overview_archive import overview_archive
from tests.browser.test_polish import _serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
MACHINE_ID = "4c4c4544004a4d1080345ac04f565232"


@pytest.fixture
def world():
    return overview_archive()


@pytest.fixture
def screenshots(artifacts):
    folder = artifacts / "screenshots"
    folder.mkdir(exist_ok=True)
    return folder


def _context(chromium, live_server, viewport, scheme):
    context = chromium.new_context(
        base_url=live_server.url,
        viewport=viewport,
        is_mobile=viewport is PHONE,
        color_scheme=scheme,
    )
    context.route(
        "**/*",
        lambda route: (
            route.continue_() if route.request.url.startswith(live_server.url) else route.abort()
        ),
    )
    return context


def _overflowing(page) -> list[str]:
    """The elements whose right edge passes the window's, for the failure's message."""
    return page.evaluate(
        """() => [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
            .slice(0, 8)
            .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""
    )


PAGES = {
    "overview": "/",
    "overview-sorted": "/?sort=-percentage",
    "history": "/source/mutter/?release=noble",
    "history-group": "/source/openssh/",
    "machine": f"/machine/?machine_id={MACHINE_ID}&release=noble",
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_no_page_scrolls_sideways_and_none_has_a_serious_accessibility_violation(
    chromium, live_server, world, viewport, scheme, screenshots
):
    context = _context(chromium, live_server, viewport, scheme)
    page = context.new_page()
    wide, violations = {}, {}
    for name, url in PAGES.items():
        page.goto(url)
        widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        if widths[0] > widths[1]:
            wide[url] = [*widths, *_overflowing(page)]
        found = _serious_violations(page)
        if found:
            violations[url] = found
        page.screenshot(
            path=screenshots / f"{name}-{viewport['width']}-{scheme}.png", full_page=True
        )
        page.screenshot(path=screenshots / f"{name}-{viewport['width']}-{scheme}-top.png")
    context.close()
    assert wide == {}
    assert violations == {}


def test_25_lines_of_the_overview_fit_in_about_1600_px_at_desktop_width(
    chromium, live_server, world, screenshots
):
    context = _context(chromium, live_server, DESKTOP, "light")
    page = context.new_page()
    page.goto("/")
    lines = page.locator("table.updates tr.line")
    assert lines.count() == 25
    table = page.locator("table.updates").bounding_box()
    page.locator("table.updates").screenshot(path=screenshots / "overview-lines-1280.png")
    context.close()
    # The table with its caption, header, two release headings and 25 lines.
    assert table["height"] <= 1600


def test_what_needs_a_person_comes_first_with_its_next_action(chromium, live_server, world):
    context = _context(chromium, live_server, DESKTOP, "light")
    page = context.new_page()
    page.goto("/")
    attention = page.locator("section.attention")
    text = attention.inner_text()
    # Above the summaries and the table.
    assert attention.bounding_box()["y"] < page.locator("table.updates").bounding_box()["y"]
    assert "mutter" in text and "clutter_actor_paint" in text
    assert "by ada: regression report" in text
    assert "Waiting for a sign-off" in text and "fixes the boot hang" in text
    assert "Held for data" in text and "snapd" in text
    assert "Archive and controller disagree" in text and "holds 30 %, the controller 50 %" in text
    assert "Frozen release" in text and "point release 22.04.6" in text
    halted_line = page.locator("tr.line", has_text="mutter").first.inner_text()
    assert "0 % (was 40 %)" in halted_line and "halted" in halted_line
    context.close()


def test_the_history_and_machine_tables_fit_1280_px_without_cut_columns(
    chromium, live_server, world
):
    context = _context(chromium, live_server, DESKTOP, "light")
    page = context.new_page()
    cut = {}
    for url in (PAGES["history"], PAGES["history-group"], PAGES["machine"]):
        page.goto(url)
        for n, widths in enumerate(
            page.eval_on_selector_all(
                ".table-wrap", "wraps => wraps.map(w => [w.scrollWidth, w.clientWidth])"
            )
        ):
            if widths[0] > widths[1]:
                cut[f"{url} table {n}"] = widths
    context.close()
    assert cut == {}


# Words of letters (not versions, which are one long token) split over two lines.
_BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll('table.versions td, table.events td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('.version, code')) continue;
      for (const match of node.textContent.matchAll(/[A-Za-z]{2,}/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken.slice(0, 10);
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_history_tables_break_no_word_and_scroll_nowhere(
    chromium, live_server, world, viewport, screenshots
):
    context = _context(chromium, live_server, viewport, "light")
    page = context.new_page()
    broken, scrolled = {}, {}
    for name in ("history", "history-group"):
        page.goto(PAGES[name])
        if found := page.evaluate(_BROKEN_WORDS):
            broken[name] = found
        for n, widths in enumerate(
            page.eval_on_selector_all(
                ".table-wrap", "wraps => wraps.map(w => [w.scrollWidth, w.clientWidth])"
            )
        ):
            if widths[0] > widths[1]:
                scrolled[f"{name} table {n}"] = widths
        page.locator("table.events").screenshot(
            path=screenshots / f"{name}-events-{viewport['width']}.png"
        )
    context.close()
    assert broken == {}
    assert scrolled == {}


def test_the_machine_page_answers_first_on_a_phone(chromium, live_server, world):
    context = _context(chromium, live_server, PHONE, "light")
    page = context.new_page()
    page.goto(PAGES["machine"])
    answer = page.locator(".machine-answer")
    box = answer.bounding_box()
    text = answer.inner_text()
    context.close()
    assert "This machine takes" in text and "in noble now" in text
    assert box["y"] + box["height"] <= PHONE["height"]


def test_the_overview_stacks_its_lines_on_a_phone(chromium, live_server, world, screenshots):
    context = _context(chromium, live_server, PHONE, "light")
    page = context.new_page()
    page.goto("/")
    lines = page.locator("table.updates tr.line")
    first, fourth = lines.nth(0).bounding_box(), lines.nth(3).bounding_box()
    page.screenshot(
        path=screenshots / "overview-lines-390.png",
        full_page=True,
        clip={"x": 0, "y": first["y"] - 120, "width": PHONE["width"], "height": 600},
    )
    context.close()
    assert first["width"] <= PHONE["width"]
    # A short card: its facts side by side, not one a line.
    assert fourth["y"] - first["y"] <= 3 * 130
