"""Atom feeds of halted updates and of every phasing change."""

from __future__ import annotations

from datetime import timedelta
from xml.etree import ElementTree

import pytest

from overview.models import Verdict
from packages.models import EventKind, PhasingState
from tests.factories import (
    NOW,
    AssessmentFactory,
    PhasingEventFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
)

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"


def _entries(response) -> list[dict[str, str]]:
    root = ElementTree.fromstring(response.content)
    return [
        {
            "title": entry.findtext(f"{ATOM}title"),
            "link": entry.find(f"{ATOM}link").get("href"),
            "summary": entry.findtext(f"{ATOM}summary"),
            "author": entry.findtext(f"{ATOM}author/{ATOM}name"),
        }
        for entry in root.findall(f"{ATOM}entry")
    ]


@pytest.fixture
def events():
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    bash = PublicationFactory(
        release=noble, source_package=SourcePackageFactory(name="bash"), version="5.2-2ubuntu0.1"
    )
    zsh = PublicationFactory(
        release=jammy, source_package=SourcePackageFactory(name="zsh"), version="5.8-3ubuntu0.1"
    )
    halt = PhasingEventFactory(
        publication=bash,
        kind=EventKind.HALTED,
        old_percentage=30,
        new_percentage=0,
        new_state=PhasingState.HALTED,
        reason="new problem: png_read_row",
        created_at=NOW,
    )
    advance = PhasingEventFactory(publication=zsh, created_at=NOW - timedelta(hours=1))
    return halt, advance


def test_the_halts_feed_lists_halted_updates_linking_their_history(anonymous, events):
    halt, _ = events

    response = anonymous.get("/feeds/halts/")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    [entry] = _entries(response)
    assert entry["title"] == "bash 5.2-2ubuntu0.1 (noble): halted, 30% → 0%"
    assert entry["link"] == f"http://testserver/source/bash/?release=noble#event-{halt.pk}"
    assert "new problem: png_read_row" in entry["summary"]
    assert entry["author"] == "controller"


def test_entry_ids_are_absolute_on_the_configured_site_whatever_the_host(
    anonymous, events, settings
):
    settings.PHASING_SITE_URL = "https://phasing.example.org/sru/"
    halt, _ = events

    root = ElementTree.fromstring(anonymous.get("/feeds/halts/").content)
    [entry_id] = [entry.findtext(f"{ATOM}id") for entry in root.findall(f"{ATOM}entry")]

    assert entry_id == (
        f"https://phasing.example.org/sru/source/bash/?release=noble#event-{halt.pk}"
    )


def test_the_feeds_page_explains_each_feed_with_its_subscribe_links(anonymous, events):
    response = anonymous.get("/feeds/")

    assert response.status_code == 200
    html = response.content.decode()
    assert '<a href="/feeds/halts/" type="application/atom+xml">Subscribe to halted updates' in html
    assert '<a href="/feeds/changes/" type="application/atom+xml">Subscribe to all changes' in html
    assert 'href="/feeds/halts/?release=jammy"' in html
    assert 'href="/feeds/changes/?release=noble"' in html
    assert "?package=" in html


def test_the_feeds_link_in_the_navigation_opens_the_feeds_page_not_raw_xml(anonymous):
    html = anonymous.get("/machine/").content.decode()

    nav = html[html.index('<nav aria-label="Site">') : html.index("</nav>")]
    assert '<a href="/feeds/">Feeds</a>' in nav


def test_the_changes_feed_lists_every_change_newest_first(anonymous, events):
    titles = [e["title"] for e in _entries(anonymous.get("/feeds/changes/"))]

    assert titles == [
        "bash 5.2-2ubuntu0.1 (noble): halted, 30% → 0%",
        "zsh 5.8-3ubuntu0.1 (jammy): advanced, 10% → 20%",
    ]


def test_feeds_filter_by_release(anonymous, events):
    titles = [e["title"] for e in _entries(anonymous.get("/feeds/changes/?release=jammy"))]
    assert titles == ["zsh 5.8-3ubuntu0.1 (jammy): advanced, 10% → 20%"]
    assert _entries(anonymous.get("/feeds/halts/?release=jammy")) == []


@pytest.mark.parametrize(
    "url", ["/feeds/halts/?release=nosuch", "/feeds/changes/?release=%3Cscript%3E"]
)
def test_an_unknown_release_is_a_404(anonymous, url):
    assert anonymous.get(url).status_code == 404


def test_an_entry_says_the_verdict_now_with_its_evidence(anonymous):
    event = PhasingEventFactory(
        kind=EventKind.HALTED,
        new_percentage=0,
        new_state=PhasingState.HALTED,
        reason="new problem: png_read_row",
    )
    AssessmentFactory(
        publication=event.publication,
        verdict=Verdict.REGRESSED,
        evidence="new bucket png_read_row (4 systems, 5 reports)",
    )

    [entry] = _entries(anonymous.get("/feeds/changes/"))

    assert entry["summary"].endswith(
        "Verdict now: regressed, new bucket png_read_row (4 systems, 5 reports)."
    )


@pytest.mark.parametrize("size", [3, 40])
def test_feeds_cost_a_fixed_number_of_queries(anonymous, django_assert_num_queries, size):
    noble = ReleaseFactory(codename="noble")
    for n in range(size):
        event = PhasingEventFactory(
            publication=PublicationFactory(
                release=noble, source_package=SourcePackageFactory(name=f"p{n}")
            )
        )
        if n % 2:
            AssessmentFactory(publication=event.publication)
    # 1 the release of the filter, 2 the events with their publications and verdicts,
    # 3 the notes of decisions on a whole release, one row per decision.
    with django_assert_num_queries(3):
        assert anonymous.get("/feeds/changes/?release=noble").status_code == 200


def test_freezing_a_release_is_one_entry_not_one_per_update(anonymous):
    from packages.services import release_freeze
    from tests.factories import UserFactory

    noble = ReleaseFactory(codename="noble")
    for n in range(20):
        PublicationFactory(
            release=noble,
            source_package=SourcePackageFactory(name=f"p{n}"),
            phased_update_percentage=20,
        )
    release_freeze(release=noble, actor=UserFactory(username="ana"), reason="point release")

    entries = _entries(anonymous.get("/feeds/changes/"))

    assert [e["title"] for e in entries] == ["noble: release frozen, 20 updates in phasing"]
    assert entries[0]["summary"] == "Release frozen by an archive admin: point release"
    assert entries[0]["link"].endswith("/?release=noble")
    assert not any(
        "20% → 20%" in e["title"] or ": release frozen, 20%" in e["title"] for e in entries
    )


def test_a_feed_of_one_source_package(anonymous, events):
    halt, advance = events

    bash = _entries(anonymous.get("/feeds/changes/?package=bash"))
    zsh_halts = _entries(anonymous.get("/feeds/halts/?package=zsh"))

    assert [e["title"] for e in bash] == ["bash 5.2-2ubuntu0.1 (noble): halted, 30% → 0%"]
    assert zsh_halts == []
    root = ElementTree.fromstring(anonymous.get("/feeds/changes/?package=bash").content)
    assert root.findtext(f"{ATOM}title") == "Phasing changes: bash"


@pytest.mark.parametrize(
    "query",
    [
        "package=nosuchpackage",
        "package=%3Cscript%3E",
        "package=" + "a" * 5000,
        "package=%00",
        "release=no%20such",
        "package=bash&release=nosuch",
    ],
)
def test_a_bad_package_or_release_is_a_4xx_never_a_500(anonymous, events, query):
    for feed in ("changes", "halts"):
        assert 400 <= anonymous.get(f"/feeds/{feed}/?{query}").status_code < 500


def test_a_reason_with_markup_goes_out_as_text_that_no_feed_reader_renders(anonymous):
    PhasingEventFactory(
        publication=PublicationFactory(),
        kind=EventKind.HALTED,
        reason='<img src=x onerror="alert(1)">',
        created_at=NOW,
    )

    response = anonymous.get("/feeds/changes/")

    root = ElementTree.fromstring(response.content)
    [summary] = root.findall(f"{ATOM}entry/{ATOM}summary")
    assert summary.get("type") == "text"
    assert '<img src=x onerror="alert(1)">' in summary.text
    assert b"<img" not in response.content
