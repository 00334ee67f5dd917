"""The overview's reads are kept per data version: a second view at the same version reads
only the page's own rows, and a committed write shows at once."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from packages.models import Publication
from tests.factories import PhasingEventFactory, PublicationFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_second_view_at_the_same_data_version_reads_only_what_is_its_own(member):
    PublicationFactory(source_package=SourcePackageFactory(name="hello"))
    member.get("/")

    with CaptureQueriesContext(connection) as second:
        assert member.get("/").status_code == 200

    # 1 the data version, 2 the session, 3 the user, 4 the footer's syncs: not the page's
    # ids (the order is kept), the rows with their problems and events (their lines are
    # kept), the filter's releases (the form is kept), the policies, groups, summaries,
    # attention list, scheduled changes, completed or averted crashes.
    assert len(second) == 4, [q["sql"][:70] for q in second.captured_queries]


def _names_shown(html: str) -> list[str]:
    return re.findall(r'data-label="Update"><a href="/updates/\d+/">([^<]+)</a>', html)


def test_pages_and_sorts_are_sliced_from_the_kept_order_and_a_write_reorders_them(member):
    names = [f"pkg{n:02}" for n in range(30)]
    for name in reversed(names):
        PublicationFactory(source_package=SourcePackageFactory(name=name))
    member.get("/")

    first, second = (member.get(f"/?page={n}").content.decode() for n in (1, 2))
    by_name_desc = member.get("/?sort=-package&page=2").content.decode()
    PublicationFactory(source_package=SourcePackageFactory(name="pkg00a"))
    after_write = member.get("/?page=2").content.decode()
    searched = member.get("/?q=pkg2").content.decode()

    assert _names_shown(first) == names[:25]
    assert _names_shown(second) == names[25:]
    assert _names_shown(by_name_desc) == list(reversed(names))[25:]
    assert _names_shown(after_write) == names[24:]
    assert _names_shown(searched) == names[20:]


def test_a_committed_write_shows_on_the_next_view(member):
    publication = PublicationFactory(source_package=SourcePackageFactory(name="hello"))
    assert "1 update in phasing" in member.get("/").content.decode()

    PublicationFactory(release=publication.release)
    Publication.objects.filter(pk=publication.pk).update(state="halted")

    html = member.get("/").content.decode()
    assert "2 updates in phasing: 1 halted" in html
    assert "Halted <span" in html
    # The update's own line too, not the one kept at the version before.
    assert html.count('class="line badge-row-halted"') == 1


def test_the_kept_filter_form_is_the_one_of_the_filters_asked_for(member):
    PublicationFactory(source_package=SourcePackageFactory(name="hello"))
    filtered = member.get("/?state=halted&sort=-percentage").content.decode()

    plain = member.get("/").content.decode()

    assert '<option value="halted" selected>' in filtered
    assert '<input type="hidden" name="sort" value="-percentage">' in filtered
    assert '<option value="halted" selected>' not in plain
    assert 'name="sort"' not in plain


def test_a_history_page_reads_its_versions_and_events_once_per_data_version(member):
    publication = PublicationFactory(source_package=SourcePackageFactory(name="hello"))
    member.get("/source/hello/")

    with CaptureQueriesContext(connection) as second:
        assert member.get("/source/hello/").status_code == 200

    # 1 the package, 2 its releases, 3 the data version, 4 the session, 5 the user, 6 the
    # footer's syncs: not the versions, their verdicts, groups and measured uptake, the
    # charts, the events or the scheduled changes.
    assert len(second) == 6, [q["sql"][:70] for q in second.captured_queries]

    PhasingEventFactory(publication=publication, reason="a write after the first view")
    assert "a write after the first view" in member.get("/source/hello/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_kept_update_page_shows_reports_only_to_those_who_may_read_them(
    anonymous, triager, publication
):
    from tests.overview.pages.test_update import with_problem_and_reports

    problem = with_problem_and_reports(publication)
    reports = reverse("triage:reports", args=[problem.bucket_id])
    page = f"/updates/{publication.pk}/"

    first = anonymous.get(page).content.decode()
    for_triager = triager.get(page).content.decode()
    again = anonymous.get(page).content.decode()

    assert reports not in first and reports not in again
    assert reports in for_triager


def test_a_write_shows_on_the_kept_update_page_at_once(anonymous, publication):
    page = f"/updates/{publication.pk}/"
    anonymous.get(page)

    PhasingEventFactory(publication=publication, reason="a write after the first view")

    assert "a write after the first view" in anonymous.get(page).content.decode()


def test_the_api_answers_a_second_time_from_its_kept_rows_and_sees_a_write(anonymous):
    publication = PublicationFactory(source_package=SourcePackageFactory(name="hello"))
    first = anonymous.get("/api/v1/publications/").json()

    again = anonymous.get("/api/v1/publications/").json()
    Publication.objects.filter(pk=publication.pk).update(state="halted")
    after = anonymous.get("/api/v1/publications/").json()

    assert again == first and first["results"][0]["state"] == "phasing"
    assert after["results"][0]["state"] == "halted"


def test_the_api_s_second_answer_reads_only_the_data_version(anonymous):
    PublicationFactory(source_package=SourcePackageFactory(name="hello"))
    anonymous.get("/api/v1/publications/?per_page=10")

    with CaptureQueriesContext(connection) as second:
        assert anonymous.get("/api/v1/publications/?per_page=10").status_code == 200

    # The data version only: not the count, not the page's ids (the order is kept), not the
    # rows (their answers are kept).
    assert len(second) == 1, [q["sql"][:70] for q in second.captured_queries]


def _api_names(answer: dict) -> list[str]:
    return [row["source_package"] for row in answer["results"]]


def test_the_api_s_pages_are_sliced_from_the_kept_order_and_a_write_reorders_them(anonymous):
    names = [f"pkg{n:02}" for n in range(30)]
    for name in reversed(names):
        PublicationFactory(source_package=SourcePackageFactory(name=name))
    api = "/api/v1/publications/"

    first, second = (anonymous.get(f"{api}?page={n}").json() for n in (1, 2))
    halted = anonymous.get(f"{api}?state=halted").json()
    PublicationFactory(source_package=SourcePackageFactory(name="pkg00a"))
    Publication.objects.filter(source_package__name="pkg07").update(state="halted")
    after_write = anonymous.get(f"{api}?page=2").json()
    halted_after = anonymous.get(f"{api}?state=halted").json()
    searched = anonymous.get(f"{api}?package=pkg2").json()

    assert (first["count"], _api_names(first)) == (30, names[:25])
    assert _api_names(second) == names[25:] and second["next"] is None
    assert halted["count"] == 0
    assert after_write["count"] == 31 and _api_names(after_write) == names[24:]
    assert _api_names(halted_after) == ["pkg07"]
    assert _api_names(searched) == names[20:]
    assert anonymous.get(f"{api}?page=3").status_code == 404


def test_the_kept_table_frame_is_the_one_of_the_query_asked_for(member):
    for name in ("hello", "world"):
        PublicationFactory(source_package=SourcePackageFactory(name=name))
    by_percentage = member.get("/?sort=-percentage").content.decode()

    plain = member.get("/").content.decode()

    assert 'aria-sort="descending"' in by_percentage and 'tr class="group"' not in by_percentage
    assert 'aria-sort="descending"' not in plain and 'tr class="group"' in plain
    assert plain.count('class="line ') == by_percentage.count('class="line ') == 2
