"""What the source shows of a publication, on the overview and its publishing history:
who is who behind the upload, a percentage read back that is not the one written (both
values), binaries at different percentages, a version also in -security that carries a
percentage, and a write the source refused. The pages' query counts do not move."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.models import WriteBack
from tests.factories import (
    NOW,
    PersonFactory,
    PhasingEventFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]


def noted(name: str, **fields):
    return PublicationFactory(
        source_package=SourcePackageFactory(name=name),
        release=ReleaseFactory(codename="noble", version="24.04"),
        source_name="launchpad",
        **fields,
    )


def test_the_history_says_who_made_the_changes_and_who_sponsored_them(anonymous):
    """The sponsor of an upload is its signer when the signer is not the uploader
    (Launchpad's package_signer and package_creator, lib/lp/soyuz/interfaces/
    publishing.py 411-437)."""
    alice = PersonFactory(account_name="alice", name="Alice Archive")
    bob = PersonFactory(account_name="bob", name="Bob Uploader")
    noted("hello", signer=alice, uploader=bob, sponsor=alice)
    noted("curl", signer=alice, uploader=alice, sponsor=None)

    hello = anonymous.get("/source/hello/").content.decode()
    curl = anonymous.get("/source/curl/").content.decode()

    bob_page = '<a class="out" href="https://launchpad.net/~bob" rel="noopener">Bob Uploader</a>'
    alice_page = (
        '<a class="out" href="https://launchpad.net/~alice" rel="noopener">Alice Archive</a>'
    )
    assert f"changes by {bob_page}, sponsored (signed) by {alice_page}" in hello
    assert f"uploaded and signed by {alice_page}" in curl


def test_a_percentage_read_back_that_is_not_the_one_written_shows_both_values(anonymous):
    noted(
        "hello",
        phased_update_percentage=40,
        written_percentage=40,
        written_at=NOW - timedelta(minutes=10),
        synced_at=NOW - timedelta(minutes=5),
        source_percentage=30,
        source_percentages=[["hello", "amd64", 30], ["hello", "arm64", 30]],
    )

    for page in (anonymous.get("/"), anonymous.get("/source/hello/")):
        assert "launchpad holds 30%, not the 40% we wrote" in page.content.decode()


def test_a_source_whose_binaries_disagree_is_a_problem_of_its_own(anonymous):
    noted(
        "hello",
        source_percentage=10,
        source_percentages=[["hello", "amd64", 10], ["libhello1", "amd64", None]],
    )

    for page in (anonymous.get("/"), anonymous.get("/source/hello/")):
        assert (
            "binaries at different percentages (10%, 100%): partial upgrades possible"
            in page.content.decode()
        )


def test_a_version_also_in_security_with_a_percentage_at_the_source_is_flagged(anonymous):
    noted(
        "hello", in_security=True, source_percentage=10, source_percentages=[["hello", "amd64", 10]]
    )

    page = anonymous.get("/source/hello/").content.decode()

    assert "also in -security yet at 10% at launchpad" in page and "LP #2051181" in page


def test_a_write_refused_for_want_of_permission_says_so_in_the_history(anonymous):
    publication = noted("hello")
    PhasingEventFactory(
        publication=publication,
        write_back=WriteBack.DENIED,
        write_back_detail="no permission to change phasing: Launchpad answered HTTP 401",
    )

    page = anonymous.get("/source/hello/").content.decode()

    assert "No permission to change phasing at the source" in page
    assert "Launchpad answered HTTP 401" in page


@pytest.mark.parametrize("size", [3, 30])
def test_the_notes_and_people_cost_no_query_more(anonymous, django_assert_num_queries, size):
    alice, bob = PersonFactory(name="Alice"), PersonFactory(name="Bob")
    package = SourcePackageFactory(name="hello")
    for n in range(size):
        publication = PublicationFactory(
            source_package=package,
            release=ReleaseFactory(codename="noble"),
            date_published=NOW - timedelta(days=n),
            signer=alice,
            uploader=bob,
            sponsor=alice,
            written_percentage=20,
            written_at=NOW - timedelta(hours=1),
            synced_at=NOW,
            source_percentage=10,
            source_percentages=[["hello", "amd64", 10], ["hello-doc", "amd64", 20]],
        )
        PhasingEventFactory(publication=publication, created_at=NOW - timedelta(days=n))
    # As pinned in test_views_history: 1 package, 2 its releases, 3 count of publications,
    # 4 their page (people joined), 5 policies, 6 the updates in phasing (dependent
    # groups), 7 their assessments, 8 the charted events, 9 count of events, 10 their
    # page, 11 pending scheduled changes, 12 source syncs in the footer, 13 the fleet
    # agents' counts of the page's publications.
    with django_assert_num_queries(13):
        assert anonymous.get("/source/hello/?release=noble").status_code == 200
    # As pinned in test_views_overview: 1 policies, 2 dependent groups, 3 summary (which
    # also counts the rows for the paginator), 4 page, 5 problems, 6 pause and halt events,
    # 7 scheduled changes, 8 the updates that need a person, 9 how many of each kind,
    # 10 filter releases, 11 recently completed, 12 crashes halts spared, 13 source syncs.
    with django_assert_num_queries(13):
        assert anonymous.get("/").status_code == 200
