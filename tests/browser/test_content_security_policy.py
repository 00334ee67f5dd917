"""Under the Content-Security-Policy the admin and the API docs still work in Chromium, and
a script from a hostile source does not run."""

from __future__ import annotations

import pytest

from overview.models import ErrorBucket
from tests.factories import PublicationFactory, SourcePackageFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "browser-test-password-5120"


def csp_violations(page) -> list[str]:
    refused: list[str] = []
    page.on(
        "console",
        lambda message: (
            refused.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return refused


def test_the_admin_works_under_the_policy(live_server, browser_page, artifacts):
    page = browser_page
    refused = csp_violations(page)
    UserFactory(username="root", is_staff=True, is_superuser=True, password=PASSWORD)
    PublicationFactory(source_package=SourcePackageFactory(name="hello"))

    page.goto(f"{live_server.url}/admin/login/?next=/admin/packages/publication/")
    page.fill('input[name="username"]', "root")
    page.fill('input[name="password"]', PASSWORD)
    page.click('input[type="submit"]')
    page.wait_for_url("**/admin/packages/publication/")
    # The changelist's own JavaScript: "select all" ticks every row and counts them.
    page.check("#action-toggle")
    assert page.inner_text(".action-counter") == "1 of 1 selected"
    page.goto(f"{live_server.url}/admin/packages/policy/add/")
    page.wait_for_selector("select#id_source_package")  # the autocomplete widget's page
    page.screenshot(path=artifacts / "csp-admin.png", full_page=True)
    assert refused == []


def test_the_api_docs_render_under_the_policy(live_server, browser_page, artifacts):
    page = browser_page
    refused = csp_violations(page)
    page.goto(f"{live_server.url}/api/v1/docs")
    page.wait_for_selector(".opblock-summary-path")  # Swagger UI listed the endpoints
    assert "/api/v1/publications/" in page.inner_text("#swagger-ui")
    page.screenshot(path=artifacts / "csp-api-docs.png", full_page=True)
    assert refused == []


def test_a_script_from_a_hostile_source_does_not_run(live_server, browser_page):
    page = browser_page
    bucket = ErrorBucket.objects.create(
        signature="<script>document.title='owned'</script>",
        function="<img src=x onerror=\"document.title='owned'\">",
        web_link="javascript:document.title='owned'",
    )
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{live_server.url}/problems/{bucket.pk}/")
    assert page.title() != "owned" and dialogs == []
    assert page.locator("a[href^='javascript:']").count() == 0
