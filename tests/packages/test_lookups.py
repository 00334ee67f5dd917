"""`field__any=values` finds what `field__in=values` finds, in one parameter."""

from __future__ import annotations

import pytest
from django.db import connection

from packages.models import Publication, SourcePackage
from tests.factories import PublicationFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture
def publications():
    return [PublicationFactory(source_package__name=f"p{n}") for n in range(4)]


def test_it_finds_what_in_finds_by_id_name_foreign_key_and_excluded(publications):
    ids = [p.pk for p in publications[:2]]
    packages = {p.source_package_id for p in publications[1:3]}
    for any_of, in_ in [
        ({"pk__any": ids}, {"pk__in": ids}),
        ({"source_package_id__any": packages}, {"source_package_id__in": packages}),
        ({"source_package__any": packages}, {"source_package__in": packages}),
        ({"source_package__name__any": ["p0", "p3"]}, {"source_package__name__in": ["p0", "p3"]}),
        ({"pk__any": []}, {"pk__in": []}),
    ]:
        assert set(Publication.objects.filter(**any_of)) == set(Publication.objects.filter(**in_))
        assert set(Publication.objects.exclude(**any_of)) == set(Publication.objects.exclude(**in_))
    assert Publication.objects.filter(pk__any=ids).count() == 2


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite keeps IN")
def test_on_postgresql_the_values_go_as_one_array_parameter():
    names = [f"p{n}" for n in range(50_000)]
    sql, params = SourcePackage.objects.filter(name__any=names).query.sql_with_params()
    assert '"name" = ANY(%s::' in sql
    assert len(params) == 1


def test_names_that_mean_something_in_an_array_literal_are_found_as_written():
    names = ['a"b', "back\\slash", "c,d", "{e}", "NULL", "", " spaced ", "ünï", "'quote"]
    for name in names:
        SourcePackage.objects.create(name=name)
    SourcePackage.objects.create(name="null")
    found = SourcePackage.objects.filter(name__any=names).values_list("name", flat=True)
    assert sorted(found) == sorted(names)
    assert not SourcePackage.objects.filter(name__any=["NUL"]).exists()


def test_an_array_of_mixed_values_is_written_as_its_text_and_anything_else_left_to_the_driver():
    from datetime import UTC, date, datetime

    from packages.lookups import array_text

    at = datetime(2026, 12, 5, 1, 2, 3, 456789, tzinfo=UTC)
    assert array_text([1, None, 2]) == "{1,NULL,2}"
    assert array_text([0.5, None, float("inf"), True, False, at, 'a"b']) == (
        '{0.5,NULL,inf,t,f,"2026-12-05T01:02:03.456789+00:00","a\\"b"}'
    )
    naive = [at.replace(tzinfo=None), 1]
    assert array_text(naive) is naive
    assert array_text([date(2026, 12, 5)]) == [date(2026, 12, 5)]
