"""The publishing-history page of a source package."""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.models import Verdict
from packages.models import ArchiveStatus, EventKind, PhasingState, Pocket
from tests.factories import (
    NOW,
    AssessmentFactory,
    PhasingEventFactory,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]


@pytest.fixture
def bash():
    package = SourcePackageFactory(name="bash")
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    old = PublicationFactory(
        source_package=package,
        release=noble,
        version="5.2-2ubuntu0.1",
        date_published=NOW - timedelta(days=20),
        status=ArchiveStatus.SUPERSEDED,
        date_superseded=NOW - timedelta(days=2),
        state=PhasingState.SUPERSEDED,
        phased_update_percentage=100,
    )
    current = PublicationFactory(
        source_package=package,
        release=noble,
        version="5.2-2ubuntu0.2",
        date_published=NOW - timedelta(days=2),
        state=PhasingState.HALTED,
        phased_update_percentage=0,
    )
    PublicationFactory(
        source_package=package,
        release=jammy,
        pocket=Pocket.SECURITY,
        version="5.1-6ubuntu1.1",
        date_published=NOW - timedelta(days=5),
        state=PhasingState.COMPLETE,
        phased_update_percentage=100,
    )
    PhasingEventFactory(
        publication=current,
        kind=EventKind.PUBLISHED,
        old_percentage=None,
        new_percentage=10,
        old_state="",
        created_at=NOW - timedelta(days=2),
    )
    PhasingEventFactory(publication=current, created_at=NOW - timedelta(days=1, hours=18))
    PhasingEventFactory(
        publication=current,
        kind=EventKind.HALTED,
        old_percentage=20,
        new_percentage=0,
        new_state=PhasingState.HALTED,
        reason="new problem: readline_crash",
        created_at=NOW - timedelta(days=1),
    )
    return package, old, current


def test_it_lists_every_version_in_every_release_and_pocket_newest_first(anonymous, bash):
    response = anonymous.get("/source/bash/")

    assert response.status_code == 200
    versions = [p.version for p in response.context["publications"]]
    assert versions == ["5.2-2ubuntu0.2", "5.1-6ubuntu1.1", "5.2-2ubuntu0.1"]
    html = response.content.decode()
    assert "Superseded" in html and "Security" in html and "not phased" in html


def test_it_filters_by_release(anonymous, bash):
    response = anonymous.get("/source/bash/?release=jammy")

    assert [p.version for p in response.context["publications"]] == ["5.1-6ubuntu1.1"]


def test_it_draws_the_percentage_over_time_with_the_halt_marked(anonymous, bash):
    _, _, current = bash

    html = anonymous.get("/source/bash/").content.decode()

    assert f'aria-labelledby="chart-{current.pk}-title chart-{current.pk}-desc"' in html
    assert "bash 5.2-2ubuntu0.2 (noble): percentage over time" in html
    assert (
        '<g class="halt"><title>2026-12-02 12:00 UTC: halted, 20% → 0% by controller: new problem: readline_crash</title>'  # noqa: E501
        in html
    )
    # The table fallback carries the same data.
    assert "The same data as a table" in html


def test_it_lists_the_phasing_events_with_actor_and_reason(anonymous, bash):
    response = anonymous.get("/source/bash/")

    html = response.content.decode()
    assert '<tr id="event-' in html and 'class="event-halted"' in html
    assert "20% → 0%" in html
    assert "new problem: readline_crash" in html
    assert [e.kind for e in response.context["events"]] == ["halted", "advanced", "published"]


def test_each_version_shows_its_verdict_the_evidence_and_what_the_halt_spared(anonymous, bash):
    _package, _old, current = bash
    AssessmentFactory(
        publication=current,
        verdict=Verdict.REGRESSED,
        evidence="new bucket readline_crash (4 systems, 5 reports)",
        share=0.14,
        crashes_new=12,
        averted=830.4,
    )

    html = anonymous.get("/source/bash/").content.decode()

    assert '<span class="verdict verdict-regressed">Regressed</span>' in html
    assert "new bucket readline_crash (4 systems, 5 reports)" in html
    assert "about 14% running it (measured); 12 crash events on it" in html
    assert "The halt spared about 830 crashes (estimate)." in html


def test_an_unknown_package_is_a_404_that_suggests_close_names(anonymous, bash):
    SourcePackageFactory(name="bash-completion")

    response = anonymous.get("/source/bsh/")

    assert response.status_code == 404
    assert response.context["suggestions"][0] == "bash"
    assert 'href="/source/bash/"' in response.content.decode()


def test_an_unknown_release_is_a_404_with_a_message(anonymous, bash):
    response = anonymous.get("/source/bash/?release=nosuch")

    assert response.status_code == 404
    assert "has no publication in a release called" in response.content.decode()


def test_bad_page_numbers_are_ignored(anonymous, bash):
    for query in ("?page=abc", "?page=9999", "?events-page=-1"):
        assert anonymous.get(f"/source/bash/{query}").status_code == 200


@pytest.mark.parametrize("size", [3, 40])
def test_the_page_costs_a_fixed_number_of_queries(anonymous, django_assert_num_queries, size):
    package = SourcePackageFactory(name="hello")
    noble = ReleaseFactory(codename="noble")
    for n in range(size):
        publication = PublicationFactory(
            source_package=package, release=noble, date_published=NOW - timedelta(days=n)
        )
        for step in range(3):
            PhasingEventFactory(
                publication=publication, created_at=NOW - timedelta(days=n, hours=step)
            )
        if n % 2:
            AssessmentFactory(publication=publication)
        ScheduledChangeFactory(publication=publication)
    # 1 package, 2 its releases, 3 count of publications, 4 their page, 5 policies,
    # 6 the updates in phasing as the dependency rule reads them (dependent groups),
    # 7 their assessments, 8 the events of the charted ones, 9 count of events, 10 their
    # page, 11 pending scheduled changes with their targets and people, 12 source syncs,
    # 13 the fleet agents' counts of the page's publications.
    with django_assert_num_queries(13):
        assert anonymous.get("/source/hello/?release=noble").status_code == 200
