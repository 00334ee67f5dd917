"""Triager pages: crash reports of a bucket, one report, overriding and revoking."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from overview.models import Override, ProblemKind
from tests.factories import (
    CrashReportFactory,
    ErrorBucketFactory,
    OverrideFactory,
    ReleaseFactory,
    SourcePackageFactory,
)

pytestmark = pytest.mark.django_db

SECRET = "SECRET-FRAME-in-libsecret.so"


@pytest.fixture
def bucket():
    return ErrorBucketFactory(source_package=SourcePackageFactory(name="tool"))


@pytest.fixture
def crash(bucket):
    return CrashReportFactory(
        bucket=bucket,
        source_package=bucket.source_package,
        stack_trace=f"#0 {SECRET}\n#1 main ()",
        environment={"LANG": "C.UTF-8", "secret": SECRET},
        package_versions={"libc6": "2.39-0ubuntu8.3"},
    )


def _reports_url(bucket) -> str:
    return reverse("triage:reports", args=[bucket.pk])


def test_anonymous_people_are_sent_to_log_in(anonymous, crash):
    for url in (_reports_url(crash.bucket), reverse("triage:report", args=[crash.pk])):
        response = anonymous.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_signed_in_people_who_are_not_triagers_get_a_403_without_the_report(
    member, archive_admin, crash
):
    for client in (member, archive_admin):
        for url in (_reports_url(crash.bucket), reverse("triage:report", args=[crash.pk])):
            response = client.get(url)
            assert response.status_code == 403
            assert SECRET not in response.content.decode()


def test_a_triager_reads_the_reports_of_a_bucket(triager, crash):
    response = triager.get(_reports_url(crash.bucket))

    assert response.status_code == 200
    body = response.content.decode()
    assert SECRET in body
    assert reverse("triage:report", args=[crash.pk]) in body
    assert reverse("overview:problem", args=[crash.bucket.pk]) in body


def test_a_triager_reads_a_whole_report(triager, crash):
    response = triager.get(reverse("triage:report", args=[crash.pk]))

    body = response.content.decode()
    assert response.status_code == 200
    assert "#1 main ()" in body
    assert "C.UTF-8" in body
    assert "2.39-0ubuntu8.3" in body
    assert crash.system_id in body
    assert "amd64" in body


def test_the_reports_filter_by_version_release_and_architecture(triager, bucket):
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    CrashReportFactory(
        bucket=bucket, version="1.0", stack_trace="frame-one-0", architecture="amd64"
    )
    CrashReportFactory(
        bucket=bucket, version="2.0", stack_trace="frame-two-0", architecture="arm64"
    )
    CrashReportFactory(bucket=bucket, version="2.0", release=jammy, stack_trace="frame-three-0")

    def shown(**query) -> set[str]:
        body = triager.get(_reports_url(bucket), query).content.decode()
        return {name for name in ("frame-one", "frame-two", "frame-three") if name in body}

    assert shown() == {"frame-one", "frame-two", "frame-three"}
    assert shown(version="2.0") == {"frame-two", "frame-three"}
    assert shown(release="jammy") == {"frame-three"}
    assert shown(architecture="arm64") == {"frame-two"}
    assert shown(version="1.0", architecture="arm64") == set()


def test_the_reports_are_paginated(triager, bucket):
    CrashReportFactory.create_batch(55, bucket=bucket)

    first = triager.get(_reports_url(bucket))
    second = triager.get(_reports_url(bucket), {"page": 2})

    assert len(first.context["page"].object_list) == 50
    assert len(second.context["page"].object_list) == 5
    assert "Page 1 of 2" in first.content.decode()


@pytest.mark.parametrize("reports", [3, 40])
def test_the_reports_page_costs_a_fixed_number_of_queries(
    triager, bucket, reports, django_assert_num_queries
):
    CrashReportFactory.create_batch(reports, bucket=bucket)
    for version in ("1.0", "1.1", "1.2"):
        OverrideFactory(bucket=bucket, source_package=bucket.source_package, version=version)
    # session, user, user permissions, group permissions, bucket, filter choices (also the
    # version hints), count, page of reports, overrides, override form packages, and the
    # source status of the site's footer
    with django_assert_num_queries(11):
        response = triager.get(_reports_url(bucket), {"version": "1.0-1ubuntu0.1"})
    assert response.status_code == 200


def test_a_triager_overrides_a_problem_for_one_version(triager, triager_user, crash):
    response = triager.post(
        reverse("triage:override_bucket", args=[crash.bucket.pk]),
        {
            "source_package": crash.source_package.pk,
            "version": "1.0-1ubuntu0.1",
            "reason": "seen long before this update",
        },
    )

    assert response.status_code == 302
    override = Override.objects.get()
    assert override.bucket == crash.bucket
    assert override.version == "1.0-1ubuntu0.1"
    assert override.kind == ProblemKind.NEW_BUCKET
    assert override.created_by == triager_user
    page = triager.get(_reports_url(crash.bucket)).content.decode()
    assert "seen long before this update" in page


def test_a_triager_overrides_a_problem_for_all_versions(triager, crash):
    triager.post(
        reverse("triage:override_bucket", args=[crash.bucket.pk]),
        {"source_package": crash.source_package.pk, "all_versions": "on", "reason": "old crash"},
    )

    assert Override.objects.get().version == ""


def test_an_override_without_a_reason_is_refused(triager, crash):
    response = triager.post(
        reverse("triage:override_bucket", args=[crash.bucket.pk]),
        {"source_package": crash.source_package.pk, "version": "1.0", "reason": " "},
    )

    assert response.status_code == 400
    assert not Override.objects.exists()


def test_an_override_needs_a_version_or_all_versions(triager, crash):
    response = triager.post(
        reverse("triage:override_bucket", args=[crash.bucket.pk]),
        {"source_package": crash.source_package.pk, "reason": "why"},
    )

    assert response.status_code == 400
    assert "Give a version, or tick all versions." in response.content.decode()


def test_an_override_can_only_name_a_package_of_the_bucket(triager, crash):
    other = SourcePackageFactory(name="unrelated")
    response = triager.post(
        reverse("triage:override_bucket", args=[crash.bucket.pk]),
        {"source_package": other.pk, "version": "1.0", "reason": "why"},
    )

    assert response.status_code == 400
    assert not Override.objects.exists()


def test_overriding_is_post_only(triager, crash):
    response = triager.get(reverse("triage:override_bucket", args=[crash.bucket.pk]))
    assert response.status_code == 405


def test_people_who_are_not_triagers_cannot_override(member, archive_admin, anonymous, crash):
    data = {"source_package": crash.source_package.pk, "version": "1.0", "reason": "why"}
    url = reverse("triage:override_bucket", args=[crash.bucket.pk])

    assert anonymous.post(url, data).status_code == 302
    assert member.post(url, data).status_code == 403
    assert archive_admin.post(url, data).status_code == 403
    assert not Override.objects.exists()


def test_a_triager_revokes_an_override_with_a_reason(triager, triager_user, bucket):
    override = OverrideFactory(bucket=bucket, source_package=bucket.source_package)

    response = triager.post(reverse("triage:revoke", args=[override.pk]), {"reason": "it was"})

    assert response.status_code == 302
    assert response["Location"] == _reports_url(bucket)
    override.refresh_from_db()
    assert override.revoked_by == triager_user
    assert override.revoke_reason == "it was"


def test_revoking_without_a_reason_changes_nothing(triager, bucket):
    override = OverrideFactory(bucket=bucket, source_package=bucket.source_package)

    triager.post(reverse("triage:revoke", args=[override.pk]), {"reason": ""})

    override.refresh_from_db()
    assert override.is_live


def test_revoking_does_not_redirect_off_the_site(triager, bucket):
    override = OverrideFactory(bucket=bucket, source_package=bucket.source_package)

    response = triager.post(
        reverse("triage:revoke", args=[override.pk]),
        {"reason": "x", "next": "https://evil.example/"},
    )

    assert response["Location"] == _reports_url(bucket)


def test_a_triager_overrides_an_increased_crash_rate(triager):
    SourcePackageFactory(name="tool")

    response = triager.post(
        reverse("triage:override_rate"),
        {"source_package": "tool", "version": "1.1", "reason": "a popular day, not a regression"},
    )

    assert response.status_code == 302
    override = Override.objects.get()
    assert override.kind == ProblemKind.INCREASED_RATE
    assert override.bucket is None
    listing = triager.get(reverse("triage:overrides")).content.decode()
    assert "a popular day, not a regression" in listing


def test_the_overrides_list_hides_revoked_ones_unless_asked(triager, bucket, triager_user):
    OverrideFactory(bucket=bucket, reason="live one")
    OverrideFactory(bucket=bucket, reason="dead one", revoked_at=bucket.last_seen)

    live = triager.get(reverse("triage:overrides")).content.decode()
    everything = triager.get(reverse("triage:overrides"), {"show": "all"}).content.decode()

    assert "live one" in live and "dead one" not in live
    assert "dead one" in everything


def test_overriding_without_the_csrf_token_is_refused(triager_user, crash):
    client = Client(enforce_csrf_checks=True)
    client.force_login(triager_user)

    response = client.post(
        reverse("triage:override_bucket", args=[crash.bucket.pk]),
        {"source_package": crash.source_package.pk, "version": "1.0", "reason": "why"},
    )

    assert response.status_code == 403
    assert not Override.objects.exists()


@pytest.mark.parametrize("persona", ["anonymous", "member", "triager"])
def test_restricted_pages_are_never_kept_by_a_cache(persona, request, crash, bucket):
    client = request.getfixturevalue(persona)
    for url in (
        _reports_url(bucket),
        reverse("triage:report", args=[crash.pk]),
        reverse("triage:overrides"),
    ):
        response = client.get(url)
        cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= cache_control, (persona, url, response.status_code)


def test_people_without_the_permission_cannot_revoke_or_override_a_rate_and_nothing_changes(
    member, archive_admin, crash
):
    package = crash.source_package
    override = OverrideFactory(source_package=package, bucket=crash.bucket, version="")
    revoke = reverse("triage:revoke", args=[override.pk])
    rate = reverse("triage:override_rate")
    for client in (member, archive_admin):
        assert client.post(revoke, {"reason": "not mine to say"}).status_code == 403
        assert (
            client.post(
                rate, {"source_package": package.name, "all_versions": "on", "reason": "x"}
            ).status_code
            == 403
        )
    override.refresh_from_db()
    assert override.is_live
    assert list(Override.objects.all()) == [override]


def test_the_reports_page_gives_every_element_its_own_id(triager, crash):
    import re
    from collections import Counter

    body = triager.get(_reports_url(crash.bucket)).content.decode()

    ids = Counter(re.findall(r'\sid="([^"]+)"', body))
    assert [name for name, n in ids.items() if n > 1] == []
    assert 'id="id_version"' in body and 'id="override_version"' in body
    assert 'for="override_version"' in body


def test_overriding_from_a_report_starts_with_its_package_and_version(triager, crash):
    report_page = triager.get(reverse("triage:report", args=[crash.pk])).content.decode()
    link = (
        f"{_reports_url(crash.bucket)}?version={crash.version}"
        f"&amp;package={crash.source_package.name}#override"
    )
    assert link in report_page

    response = triager.get(
        _reports_url(crash.bucket),
        {"version": crash.version, "package": crash.source_package.name},
    )

    form = response.context["override_form"]
    assert form.initial == {"version": crash.version, "source_package": crash.source_package.pk}
    assert f'id="override_version" value="{crash.version}"' in response.content.decode()


def test_a_version_or_package_the_bucket_never_had_is_not_prefilled(triager, crash):
    response = triager.get(_reports_url(crash.bucket), {"version": "9.9", "package": "<script>"})

    assert response.status_code == 200
    assert response.context["override_form"].initial == {}


def test_the_overrides_page_is_paginated(triager, bucket):
    from overview.triage.views import OVERRIDES_PER_PAGE

    for n in range(OVERRIDES_PER_PAGE + 3):
        OverrideFactory(bucket=bucket, source_package=bucket.source_package, version=f"1.{n}")

    first = triager.get(reverse("triage:overrides"))
    second = triager.get(reverse("triage:overrides"), {"page": 2, "show": "all"})

    assert len(first.context["page"].object_list) == OVERRIDES_PER_PAGE
    assert len(second.context["page"].object_list) == 3
    assert "Page 1 of 2" in first.content.decode()
    assert "show=all" in second.content.decode()


def test_a_report_links_its_package_version_and_bucket_out_for_a_triager(triager, crash):
    html = triager.get(reverse("triage:report", args=[crash.pk])).content.decode()
    assert f'href="https://launchpad.net/ubuntu/+source/tool/{crash.version}"' in html
    assert 'href="https://launchpad.net/ubuntu/+source/tool/+publishinghistory"' in html
    assert 'href="https://errors.ubuntu.com/problem/' in html
    reports = triager.get(_reports_url(crash.bucket)).content.decode()
    assert f'href="https://launchpad.net/ubuntu/+source/tool/{crash.version}"' in reports
