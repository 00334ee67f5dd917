"""The publication admin with overview's problems column and filter."""

from __future__ import annotations

import pytest
from django.urls import reverse

from packages.models import PhasingState
from tests.factories import (
    ProblemFactory,
    PublicationFactory,
    SourcePackageFactory,
)
from tests.packages.admin.admin_actions import CHANGELIST

pytestmark = pytest.mark.django_db


def test_the_publications_list_shows_what_an_archive_admin_needs(archive_admin, publication):
    ProblemFactory(publication=publication)

    response = archive_admin.get(reverse(CHANGELIST))

    body = response.content.decode()
    assert response.status_code == 200
    for text in ("tool", "noble", "1.2-1ubuntu0.1", "10%", "Phasing"):
        assert text in body
    assert reverse("overview:history", args=["tool"]) in body


def test_the_publications_list_filters_by_problems_and_state(archive_admin):
    troubled = PublicationFactory(source_package=SourcePackageFactory(name="troubled"))
    ProblemFactory(publication=troubled)
    PublicationFactory(source_package=SourcePackageFactory(name="calm"))
    PublicationFactory(source_package=SourcePackageFactory(name="held"), state=PhasingState.PAUSED)

    def listed(**query) -> set[str]:
        response = archive_admin.get(reverse(CHANGELIST), query)
        return {p.source_package.name for p in response.context["cl"].result_list}

    assert listed(problems="any") == {"troubled"}
    assert listed(problems="unresolved") == {"troubled"}
    assert listed(problems="none") == {"calm", "held"}
    assert listed(state="paused") == {"held"}
    assert listed(q="trou") == {"troubled"}


def test_an_overridden_problem_is_not_unresolved(archive_admin):
    from tests.factories import OverrideFactory

    pub = PublicationFactory(source_package=SourcePackageFactory(name="tool"))
    problem = ProblemFactory(publication=pub)
    OverrideFactory(source_package=pub.source_package, bucket=problem.bucket, version="")

    response = archive_admin.get(reverse(CHANGELIST), {"problems": "unresolved"})

    assert list(response.context["cl"].result_list) == []


@pytest.mark.parametrize("count", [2, 30])
def test_the_publications_list_costs_a_fixed_number_of_queries(
    archive_admin, count, django_assert_num_queries
):
    for n in range(count):
        pub = PublicationFactory(source_package=SourcePackageFactory(name=f"pkg{n}"))
        ProblemFactory(publication=pub)
    # 1 session, 2 user, 3 user permissions, 4 group permissions, 5 the release filter's
    # choices, 6 filtered count, 7 full count, 8 the page (last change and problem count
    # as subqueries)
    with django_assert_num_queries(8):
        response = archive_admin.get(reverse(CHANGELIST))
    assert response.status_code == 200


def test_the_publications_list_opens_on_updates_in_phasing_and_all_clears_it(archive_admin):
    for name, state in [
        ("rising", PhasingState.PHASING),
        ("paused", PhasingState.PAUSED),
        ("halted", PhasingState.HALTED),
        ("done", PhasingState.COMPLETE),
        ("old", PhasingState.SUPERSEDED),
    ]:
        PublicationFactory(source_package=SourcePackageFactory(name=name), state=state)

    def listed(**query) -> set[str]:
        response = archive_admin.get(reverse(CHANGELIST), query)
        return {p.source_package.name for p in response.context["cl"].result_list}

    assert listed() == {"rising", "paused", "halted"}
    assert listed(state__exact="all") == {"rising", "paused", "halted", "done", "old"}
    assert listed(state__exact="complete") == {"done"}
    body = archive_admin.get(reverse(CHANGELIST)).content.decode()
    assert "?state__exact=all" in body and "In phasing (phasing, paused or halted)" in body


def test_the_publications_list_searches_by_package_and_version(archive_admin):
    bash = SourcePackageFactory(name="bash")
    PublicationFactory(source_package=bash, version="5.2-2ubuntu0.1")
    PublicationFactory(source_package=bash, version="5.1-6ubuntu1.1")
    PublicationFactory(source_package=SourcePackageFactory(name="zsh"), version="5.2-3ubuntu0.1")

    def found(words: str) -> set[str]:
        response = archive_admin.get(reverse(CHANGELIST), {"q": words})
        return {f"{p.source_package.name} {p.version}" for p in response.context["cl"].result_list}

    assert found("bash") == {"bash 5.2-2ubuntu0.1", "bash 5.1-6ubuntu1.1"}
    assert found("5.2-") == {"bash 5.2-2ubuntu0.1", "zsh 5.2-3ubuntu0.1"}
    assert found("bash 5.2") == {"bash 5.2-2ubuntu0.1"}
