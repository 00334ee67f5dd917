"""Bulk writes: the PostgreSQL statements and the portable ORM path store the same thing.

CI runs this module on PostgreSQL (both paths, the portable one forced) and again on the
embedded SQLite default, where only the portable path exists.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection

from packages.models import PhasingState, Publication, SourcePackage
from packages.services import bulk
from tests.factories import NOW, PublicationFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture(params=["native", "portable"])
def path(request, monkeypatch):
    """Each bulk writer through the path this database takes, then through the ORM's."""
    if request.param == "portable":
        monkeypatch.setattr(bulk, "uses_postgresql", lambda: False)
    elif connection.vendor != "postgresql":
        pytest.skip("the native path is PostgreSQL's")
    return request.param


def test_publications_save_writes_each_rows_own_values(path):
    first, second = PublicationFactory(), PublicationFactory()
    admin = UserFactory()
    first.phased_update_percentage, first.state = 40, PhasingState.PAUSED
    first.hold_detail, first.state_changed_at = "paused by a person", NOW
    second.phased_update_percentage, second.state = 0, PhasingState.HALTED
    second.hold_detail, second.state_changed_at = "crashes", NOW + timedelta(hours=1)
    bulk.publications_save(
        [first, second], ("phased_update_percentage", "state", "hold_detail", "state_changed_at")
    )
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.phased_update_percentage, first.state, first.hold_detail) == (
        40,
        "paused",
        "paused by a person",
    )
    assert (second.phased_update_percentage, second.state, second.state_changed_at) == (
        0,
        "halted",
        NOW + timedelta(hours=1),
    )
    assert admin.pk  # nothing else was touched


def test_publications_save_of_nothing_runs_no_query(path, django_assert_num_queries):
    with django_assert_num_queries(0):
        bulk.publications_save([], ("state",))


def test_ids_for_names_makes_what_is_missing_and_finds_what_exists(path):
    known = SourcePackage.objects.create(name="known")
    ids = bulk.ids_for_names(SourcePackage, "name", ["known", "new-one", "new-one"])
    assert ids["known"] == known.pk
    assert set(ids) == {"known", "new-one"}
    assert SourcePackage.objects.filter(name="new-one").count() == 1
    assert Publication.objects.count() == 0


@pytest.fixture
def upsert_path(path):
    """rows_upsert's other path is SQLite's own SQL (`IS NOT`), not the ORM's: it runs there."""
    if path == "portable" and connection.vendor == "postgresql":
        pytest.skip("the upsert's portable path is SQLite's")
    return path


# Values whose text means something in an array literal, or that a column holds rarely.
_AWKWARD_WORDS = ['a"b, {c}', "back\\slash", "NULL", "", " spaced ", "ünï 'quote'"]


def test_rows_upsert_stores_every_value_as_written(upsert_path):
    from overview.controller.assessments import assessments_record
    from overview.models import Assessment

    publications = [PublicationFactory() for _ in _AWKWARD_WORDS]
    moments = [NOW + timedelta(microseconds=n * 123_457) for n in range(len(_AWKWARD_WORDS))]
    floats = [1e-07, 0.1 + 0.2, 2.5, float("inf"), 1e300, 0.0]
    rows = [
        Assessment(
            publication_id=p.pk,
            judge="sequential",
            verdict="insufficient",
            evidence=word,
            ratio=number,
            ratio_low=None if n % 2 else number,
            crashes_new=n,
            share=number if number != float("inf") else 1.0,
            averted=None,
            assessed_at=moment,
        )
        for n, (p, word, number, moment) in enumerate(
            zip(publications, _AWKWARD_WORDS, floats, moments, strict=True)
        )
    ]
    assessments_record(rows)
    stored = {a.publication_id: a for a in Assessment.objects.all()}
    for row in rows:
        found = stored[row.publication_id]
        assert (found.evidence, found.ratio, found.ratio_low, found.averted) == (
            row.evidence,
            row.ratio,
            row.ratio_low,
            None,
        )
        assert (found.crashes_new, found.share, found.assessed_at) == (
            row.crashes_new,
            row.share,
            row.assessed_at,
        )


def test_rows_upsert_rewrites_a_row_only_where_what_was_found_changed(upsert_path):
    from overview.controller.assessments import assessments_record
    from overview.models import Assessment

    same, changed = PublicationFactory(), PublicationFactory()

    def found(publication, evidence, at):
        return Assessment(
            publication_id=publication.pk,
            judge="sequential",
            verdict="healthy",
            evidence=evidence,
            assessed_at=at,
        )

    assessments_record([found(same, "healthy", NOW), found(changed, "healthy", NOW)])
    later = NOW + timedelta(minutes=5)
    assessments_record([found(same, "healthy", later), found(changed, "a rise", later)])
    stored = {a.publication_id: a for a in Assessment.objects.all()}
    assert (stored[same.pk].evidence, stored[same.pk].assessed_at) == ("healthy", NOW)
    assert (stored[changed.pk].evidence, stored[changed.pk].assessed_at) == ("a rise", later)
