"""Instances read straight from their rows behave as Django's own: same values, deferred
fields read when asked for, related objects cached, saved as updates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db.models import Model
from django.db.models.signals import post_init

from packages.models import Publication
from tests.factories import PublicationFactory

pytestmark = pytest.mark.django_db


def _django_read(queryset):
    """The same query read through Django's own Model.from_db."""
    original = Publication.from_db
    Publication.from_db = classmethod(Model.from_db.__func__)  # type: ignore[method-assign]
    try:
        return list(queryset)
    finally:
        del Publication.from_db
        assert Publication.from_db.__func__ is original.__func__


def _fields(instance):
    return {k: v for k, v in vars(instance).items() if k != "_state"}


def test_a_publication_read_holds_the_values_django_would_give_it():
    made = PublicationFactory(phased_update_percentage=30, binaries=["hello", "hello-doc"])
    queryset = Publication.objects.filter(pk=made.pk).defer("closed_bugs")

    (ours,) = list(queryset)
    (djangos,) = _django_read(queryset)

    assert type(ours) is Publication
    assert _fields(ours) == _fields(djangos)
    assert ours.binaries == ["hello", "hello-doc"]
    assert not ours._state.adding
    assert ours._state.db == "default"


def test_a_deferred_field_is_read_when_asked_for():
    made = PublicationFactory(closed_bugs=[4242])
    ours = Publication.objects.defer("closed_bugs").get(pk=made.pk)

    assert ours.get_deferred_fields() == {"closed_bugs"}
    assert ours.closed_bugs == [4242]


def test_related_rows_read_with_it_are_cached_on_it(django_assert_num_queries):
    made = PublicationFactory()
    with django_assert_num_queries(1):
        ours = Publication.objects.select_related("release", "source_package").get(pk=made.pk)
        assert ours.release.codename == made.release.codename
        assert ours.source_package.name == made.source_package.name


def test_a_publication_read_and_saved_is_updated_not_inserted():
    made = PublicationFactory(phased_update_percentage=10)
    ours = Publication.objects.get(pk=made.pk)
    ours.phased_update_percentage = 20
    ours.save(update_fields=["phased_update_percentage"])

    assert Publication.objects.count() == 1
    assert Publication.objects.get(pk=made.pk).phased_update_percentage == 20


def test_a_listener_of_post_init_still_hears_every_instance_read():
    made = PublicationFactory()
    heard = []

    def listen(sender, instance, **kwargs):
        heard.append(instance)

    post_init.connect(listen, sender=Publication)
    try:
        ours = Publication.objects.get(pk=made.pk)
    finally:
        post_init.disconnect(listen, sender=Publication)

    assert heard == [ours]


def test_an_instance_built_for_a_bulk_write_holds_what_django_would_give_it():
    from overview.models import Assessment
    from packages.models.loading import built

    publication = PublicationFactory()
    values = {
        "publication_id": publication.pk,
        "judge": "sequential",
        "verdict": "healthy",
        "assessed_at": datetime(2026, 1, 5, tzinfo=UTC),
    }

    ours, djangos = built(Assessment, **values), Assessment(**values)

    assert type(ours) is Assessment
    # Every field Django sets, at its default where none was given, and nothing deferred.
    assert _fields(ours) == _fields(djangos)
    assert ours.get_deferred_fields() == set()
    assert ours._state.adding and ours._state.db is None
    ours.save(force_insert=True)
    assert Assessment.objects.get(pk=publication.pk).verdict == "healthy"
    with pytest.raises(TypeError, match="verdikt"):  # as Django refuses a misspelt field
        built(Assessment, **values, verdikt="healthy")


def test_an_instance_is_built_by_django_when_something_listens_to_its_making():
    from overview.models import Assessment
    from packages.models.loading import built

    heard = []

    def listener(sender, instance, **kwargs):
        heard.append(sender)

    post_init.connect(listener, sender=Assessment)
    try:
        built(Assessment, judge="ubuntu")
    finally:
        post_init.disconnect(listener, sender=Assessment)
    assert heard == [Assessment]
