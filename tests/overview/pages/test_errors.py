"""Error pages are the site's own pages (base.html), JSON under the API."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from overview.pages import errors
from tests.factories import CrashReportFactory

pytestmark = pytest.mark.django_db


def _is_a_site_page(html: str) -> bool:
    return '<header class="site">' in html and 'class="brand"' in html and "<footer" in html


def test_a_403_is_a_styled_page_saying_who_may_see_it(member):
    report = CrashReportFactory()

    response = member.get(f"/reports/{report.pk}/")

    assert response.status_code == 403
    html = response.content.decode()
    assert _is_a_site_page(html)
    assert "<h1>Not allowed</h1>" in html
    assert "triagers" in html


def test_a_403_raised_anywhere_is_the_styled_page(archive_admin):
    response = archive_admin.get("/admin/auth/user/")  # the admin raises PermissionDenied

    assert response.status_code == 403
    assert "<h1>Not allowed</h1>" in response.content.decode()


def test_a_403_under_the_api_is_json():
    request = RequestFactory().get("/api/v1/publications/")

    response = errors.permission_denied(request, PermissionDenied())

    assert (response.status_code, response["Content-Type"]) == (403, "application/json")


def test_a_404_is_a_styled_page(anonymous):
    response = anonymous.get("/no/such/page/")

    assert response.status_code == 404
    html = response.content.decode()
    assert _is_a_site_page(html) and "<h1>Not found</h1>" in html


def test_a_500_is_a_styled_page_that_reads_no_database(django_assert_num_queries):
    request = RequestFactory().get("/")

    with django_assert_num_queries(0):
        response = errors.server_error(request)

    assert response.status_code == 500
    html = response.content.decode()
    assert _is_a_site_page(html)
    assert "Something went wrong on our side" in html


def test_a_503_is_a_styled_page_that_reads_no_database(django_assert_num_queries):
    request = RequestFactory().get("/")

    with django_assert_num_queries(0):
        response = errors.database_unavailable(request, OSError("refused"))

    assert response.status_code == 503
    html = response.content.decode()
    assert _is_a_site_page(html)
    assert "The database is not answering" in html
