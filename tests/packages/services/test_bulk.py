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
