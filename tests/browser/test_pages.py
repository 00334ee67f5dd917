"""A visitor reads the public pages in a real browser: overview, history, machine check."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from packages.domain import apt_phasing
from packages.models import EventKind, PhasingState
from tests.factories import (
    ErrorBucketFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
    SourceSyncFactory,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MACHINE_ID = "4c4c4544004a4d1080345ac04f565232"
ROWS = "table.updates tbody tr.line"
# The package's own link in each line: to the update's page.
PACKAGE_LINKS = f"{ROWS} th.update > a:first-child"


@pytest.fixture
def archive():
    """Two releases with updates in every state, one with a phasing history worth a chart."""
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    SourceSyncFactory(last_success_at=now)
    for name, release, percentage, state in (
        ("bash", noble, 60, PhasingState.PHASING),
        ("coreutils", noble, 20, PhasingState.PHASING),
        ("openssl", noble, 40, PhasingState.PAUSED),
        ("systemd", jammy, 80, PhasingState.PHASING),
        ("vim", jammy, 30, PhasingState.PHASING),
    ):
        PublicationFactory(
            release=release,
            source_package=SourcePackageFactory(name=name),
            version=f"1.0-1ubuntu0.{percentage}",
            phased_update_percentage=percentage,
            state=state,
            date_published=now - timedelta(days=2),
            last_increase_at=now - timedelta(hours=2),
        )
    libpng = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="libpng1.6"),
        version="1.6.43-5ubuntu0.2",
        phased_update_percentage=0,
        state=PhasingState.HALTED,
        date_published=now - timedelta(days=2),
    )
    for hours, old, new in ((48, None, 10), (42, 10, 20), (36, 20, 30)):
        PhasingEventFactory(
            publication=libpng,
            kind=EventKind.PUBLISHED if old is None else EventKind.ADVANCED,
            old_percentage=old,
            new_percentage=new,
            created_at=now - timedelta(hours=hours),
        )
    PhasingEventFactory(
        publication=libpng,
        kind=EventKind.HALTED,
        old_percentage=30,
        new_percentage=0,
        new_state=PhasingState.HALTED,
        reason="new problem: png_read_row",
        created_at=now - timedelta(hours=33),
    )
    ProblemFactory(publication=libpng, bucket=ErrorBucketFactory(function="png_read_row"))
    return noble


def test_a_visitor_filters_sorts_follows_a_package_and_checks_a_machine(
    browser_page, live_server, archive, artifacts
):
    page = browser_page
    page.goto("/")
    assert page.title() == "Updates in phasing · Phasing"
    assert page.locator(ROWS).count() == 6
    assert "1 at 60%, 1 at 40%, 1 at 20%, 1 at 0%" in page.inner_text(".summaries")
    page.screenshot(path=artifacts / "overview.png", full_page=True)

    # Filter by release and state: the filter state goes into the URL.
    page.select_option("#id_release", "noble")
    page.select_option("#id_state", "phasing")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/?release=noble&state=phasing*")
    names = page.locator(PACKAGE_LINKS).all_inner_texts()
    assert names == ["bash", "coreutils"]

    # Sort by percentage, then the other way round.
    page.click("thead th a:text-is('Phased')")
    page.wait_for_url("**sort=percentage*")
    assert page.locator(PACKAGE_LINKS).all_inner_texts() == [
        "coreutils",
        "bash",
    ]
    page.click("thead th a:text-is('Phased')")
    page.wait_for_url("**sort=-percentage*")
    assert page.locator(PACKAGE_LINKS).all_inner_texts() == [
        "bash",
        "coreutils",
    ]
    page.screenshot(path=artifacts / "overview-filtered-sorted.png", full_page=True)

    # A halted update is at the top with its problem, and the history page draws its chart.
    page.goto("/?state=halted")
    assert "new problem: png_read_row" in page.inner_text("section.attention")
    assert page.locator(f"{ROWS} .verdict[title='png_read_row']").inner_text() == "regressed"
    page.goto("/source/libpng1.6/?release=noble")
    chart = page.locator("svg.phasing-chart")
    assert chart.count() == 1
    assert chart.locator("g.halt").count() == 1
    assert "percentage over time" in chart.locator("title").first.text_content()
    assert page.locator("tr.event-halted").inner_text().count("new problem: png_read_row") == 1
    page.screenshot(path=artifacts / "history.png", full_page=True)

    # The machine check gives apt's answer for each update of the release.
    page.click("header a:text-is('Is my machine in the phase?')")
    page.fill("#id_machine_id", MACHINE_ID)
    page.select_option("#id_release", "noble")
    page.click("form.machine-form button[type=submit]")
    page.wait_for_url(f"**/machine/?machine_id={MACHINE_ID}&release=noble")
    rows = page.locator("table.machine tbody tr")
    assert rows.count() == 4
    bash_row = rows.filter(has_text="bash").inner_text()
    draw = apt_phasing.phased_draw("bash", "1.0-1ubuntu0.60", MACHINE_ID)
    assert f"\t{draw}\t" in bash_row
    assert ("Yes" if draw <= 60 else "No") in bash_row
    page.screenshot(path=artifacts / "machine.png", full_page=True)

    # A machine id apt could not use is a form error, not a crash; any other is drawn on.
    page.fill("#id_machine_id", "x" * 201)
    page.click("form.machine-form button[type=submit]")
    assert "at most 200 characters" in page.inner_text(".form-error")
    page.screenshot(path=artifacts / "machine-error.png", full_page=True)


def test_the_overview_reads_on_a_phone(phone_page, live_server, archive, artifacts):
    phone_page.goto("/")
    first_row = phone_page.locator(ROWS).first
    assert first_row.is_visible()
    # Cells stack under their column names rather than scrolling sideways.
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400
    phone_page.screenshot(path=artifacts / "overview-phone.png", full_page=True)
