"""Dependent groups are computed once per data version, not on every page view."""

from __future__ import annotations

import pytest

from packages import group_cache
from packages.selectors import dependency_groups
from tests.factories import PublicationFactory


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *, policies):
        self.calls += 1
        return dependency_groups(policies=policies)


@pytest.mark.django_db(transaction=True)
def test_the_groups_of_a_data_version_are_computed_once_and_again_after_a_write():
    compute = Counting()
    PublicationFactory()

    group_cache.groups_for_pages(policies={}, compute=compute)
    group_cache.groups_for_pages(policies={}, compute=compute)
    assert compute.calls == 1

    PublicationFactory()  # a committed write raises the data version
    group_cache.groups_for_pages(policies={}, compute=compute)
    assert compute.calls == 2


@pytest.mark.django_db(transaction=True)
def test_a_hit_costs_only_the_data_version_read(django_assert_num_queries):
    PublicationFactory()
    group_cache.groups_for_pages(policies={})

    with django_assert_num_queries(1):
        group_cache.groups_for_pages(policies={})


@pytest.mark.django_db
def test_inside_a_transaction_the_groups_are_computed_afresh():
    # The transaction's own writes do not raise the version until it commits.
    compute = Counting()
    PublicationFactory()

    group_cache.groups_for_pages(policies={}, compute=compute)
    group_cache.groups_for_pages(policies={}, compute=compute)

    assert compute.calls == 2
