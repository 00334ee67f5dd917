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


# The demo runs with DEBUG on, where Django answers 404s and 500s with its technical pages.


@pytest.mark.parametrize("path", ["/no/such/page/", "/updates/999999/", "/problems/999999/"])
def test_a_404_in_development_is_the_styled_page_too(anonymous, settings, path):
    settings.DEBUG = True

    response = anonymous.get(path)

    assert response.status_code == 404
    html = response.content.decode()
    assert _is_a_site_page(html) and "<h1>Not found</h1>" in html
    assert "URLconf" not in html and "Django tried" not in html


def test_a_404_in_development_is_the_styled_page_for_an_archive_admin(archive_admin, settings):
    settings.DEBUG = True

    html = archive_admin.get("/no/such/page/").content.decode()

    assert "<h1>Not found</h1>" in html


def test_a_superuser_in_development_still_sees_djangos_technical_404(
    admin_client_superuser, settings
):
    settings.DEBUG = True

    response = admin_client_superuser.get("/no/such/page/")

    assert response.status_code == 404
    assert "URLconf" in response.content.decode()


def test_an_address_without_its_slash_is_still_redirected_in_development(anonymous, settings):
    settings.DEBUG = True

    response = anonymous.get("/machine")

    assert (response.status_code, response["Location"]) == (301, "/machine/")


def test_a_500_in_development_is_the_styled_page_and_logged(settings, caplog):
    from django.contrib.auth.models import AnonymousUser

    from overview.pages.middleware import StyledErrorsInDevelopmentMiddleware

    settings.DEBUG = True
    request = RequestFactory().get("/")
    request.user = AnonymousUser()
    middleware = StyledErrorsInDevelopmentMiddleware(lambda request: None)

    try:
        raise RuntimeError("a bug")
    except RuntimeError as error:
        response = middleware.process_exception(request, error)

    assert response is not None and response.status_code == 500
    assert _is_a_site_page(response.content.decode())
    assert "a bug" in caplog.text
