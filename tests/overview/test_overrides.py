"""Overriding problems and revoking overrides, through the service and the overrides file."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from overview.models import ErrorBucket, Override, ProblemKind
from overview.services.overrides import override_create, override_revoke
from packages.models import SourcePackage
from tests.factories import NOW, ErrorBucketFactory, SourcePackageFactory, UserFactory

pytestmark = pytest.mark.django_db


def _create(**kwargs):
    defaults = {
        "source_package": kwargs.pop("source_package", None) or SourcePackageFactory(name="tool"),
        "version": "1.0-1ubuntu0.2",
        "kind": ProblemKind.NEW_BUCKET,
        "actor": kwargs.pop("actor", None) or UserFactory(username="tessa"),
        "reason": "crash predates the update",
        "now": NOW,
    }
    defaults.update(kwargs)
    if "bucket" not in defaults:
        defaults["bucket"] = ErrorBucketFactory()
    return override_create(**defaults)


def test_an_override_records_who_when_and_why():
    override = _create()

    override.refresh_from_db()
    assert override.is_live
    assert override.created_by.username == "tessa"
    assert override.created_by_name == "tessa"
    assert override.created_at == NOW
    assert override.reason == "crash predates the update"


def test_overriding_the_same_problem_twice_keeps_the_first_override():
    bucket = ErrorBucketFactory()
    first = _create(bucket=bucket)
    second = _create(bucket=bucket, reason="said again", now=NOW + timedelta(hours=1))

    assert second.pk == first.pk
    assert second.reason == "crash predates the update"
    assert Override.objects.count() == 1


def test_an_override_needs_a_reason():
    with pytest.raises(ValidationError):
        _create(reason="   ")
    assert not Override.objects.exists()


def test_a_bucket_override_needs_its_bucket():
    with pytest.raises(ValidationError):
        _create(bucket=None)


def test_an_increased_rate_override_names_no_bucket():
    override = _create(kind=ProblemKind.INCREASED_RATE, bucket=ErrorBucketFactory(), version="")

    assert override.bucket is None
    assert override.version == ""
    assert str(override) == "tool all versions: increased-rate"


def test_a_star_version_means_every_version():
    assert _create(version="*").version == ""


def test_revoking_keeps_the_row_and_says_who_and_why():
    override = _create()
    revoker = UserFactory(username="rita")

    override_revoke(override=override, actor=revoker, reason="it was the update after all", now=NOW)

    override.refresh_from_db()
    assert not override.is_live
    assert override.revoked_by == revoker
    assert override.revoke_reason == "it was the update after all"


def test_revoking_twice_changes_nothing_the_second_time():
    override = _create()
    override_revoke(override=override, actor=UserFactory(username="a"), reason="first", now=NOW)
    override_revoke(
        override=override, actor=UserFactory(username="b"), reason="second", now=NOW + timedelta(1)
    )

    override.refresh_from_db()
    assert override.revoke_reason == "first"
    assert override.revoked_at == NOW


def test_revoking_needs_a_reason():
    override = _create()
    with pytest.raises(ValidationError):
        override_revoke(override=override, actor=UserFactory(), reason="")
    override.refresh_from_db()
    assert override.is_live


def test_after_a_revoke_the_problem_can_be_overridden_again():
    bucket = ErrorBucketFactory()
    first = _create(bucket=bucket)
    override_revoke(override=first, actor=UserFactory(), reason="wrong", now=NOW)

    second = _create(bucket=bucket, reason="right this time")

    assert second.pk != first.pk
    assert Override.objects.filter(revoked_at__isnull=True).get() == second


# --- phasing_overrides import / export ---------------------------------------------------


def _import(tmp_path, text: str, *args: str) -> tuple[str, str]:
    path = tmp_path / "phased-updates-overrides.txt"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    call_command("phasing_overrides", "import", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_reads_ubuntu_lines_matching_known_buckets(tmp_path):
    bucket = ErrorBucketFactory(web_link="https://errors.ubuntu.com/problem/abc123")
    UserFactory(username="sru")

    out, err = _import(
        tmp_path,
        "tool, 1.2-3ubuntu0.1, https://errors.ubuntu.com/problem/abc123\n"
        "tool, 1.2-3ubuntu0.1, increased-rate\n",
        "--actor",
        "sru",
    )

    assert "imported 2 overrides" in out
    assert err == ""
    by_kind = {o.kind: o for o in Override.objects.all()}
    assert by_kind[ProblemKind.NEW_BUCKET].bucket == bucket
    assert by_kind[ProblemKind.NEW_BUCKET].version == "1.2-3ubuntu0.1"
    assert by_kind[ProblemKind.NEW_BUCKET].created_by.username == "sru"
    assert by_kind[ProblemKind.INCREASED_RATE].bucket is None


def test_import_makes_a_bucket_for_an_unknown_problem_url(tmp_path):
    _import(tmp_path, "newpkg, 2.0, https://errors.ubuntu.com/problem/fff\n")

    bucket = ErrorBucket.objects.get(web_link="https://errors.ubuntu.com/problem/fff")
    assert bucket.source_package == SourcePackage.objects.get(name="newpkg")
    assert Override.objects.get().bucket == bucket


def test_import_accepts_our_own_bucket_page_urls(tmp_path, settings):
    settings.PHASING_SITE_URL = "https://phasing.example"
    bucket = ErrorBucketFactory()

    _import(tmp_path, f"tool, *, https://phasing.example/problems/{bucket.pk}/\n")

    override = Override.objects.get()
    assert override.bucket == bucket
    assert override.version == ""


def test_import_reports_bad_lines_by_number_and_imports_the_rest(tmp_path):
    out, err = _import(
        tmp_path,
        "# a comment\n"
        "tool, 1.0, increased-rate\n"
        "only two, fields\n"
        "\n"
        "tool, 1.0, not-a-url\n"
        ", 1.0, increased-rate\n",
    )

    assert ":3: skipped" in err
    assert ":5: skipped" in err
    assert ":6: skipped" in err
    assert "imported 1 overrides" in out
    assert "3 lines skipped" in out
    assert Override.objects.count() == 1


def test_import_twice_adds_nothing_the_second_time(tmp_path):
    text = "tool, 1.0, increased-rate\n"
    _import(tmp_path, text)
    out, _ = _import(tmp_path, text)

    assert "imported 0 overrides, 1 already present" in out
    assert Override.objects.count() == 1


def test_import_refuses_an_unknown_actor(tmp_path):
    with pytest.raises(CommandError):
        _import(tmp_path, "tool, 1.0, increased-rate\n", "--actor", "nobody")


def test_export_writes_live_overrides_in_ubuntu_format(settings):
    settings.PHASING_SITE_URL = "https://phasing.example"
    linked = ErrorBucketFactory(web_link="https://errors.ubuntu.com/problem/abc")
    local = ErrorBucketFactory()
    tool = SourcePackageFactory(name="tool")
    _create(source_package=tool, version="1.0", bucket=linked)
    _create(source_package=tool, version="", bucket=local)
    _create(source_package=tool, version="1.0", kind=ProblemKind.INCREASED_RATE, bucket=None)
    revoked = _create(source_package=SourcePackageFactory(name="gone"), version="9")
    override_revoke(override=revoked, actor=UserFactory(), reason="no")

    out = io.StringIO()
    call_command("phasing_overrides", "export", stdout=out)

    assert out.getvalue().splitlines() == [
        f"tool, *, https://phasing.example/problems/{local.pk}/",
        "tool, 1.0, https://errors.ubuntu.com/problem/abc",
        "tool, 1.0, increased-rate",
    ]


def test_an_exported_file_imports_back_to_the_same_overrides(tmp_path):
    linked = ErrorBucketFactory(web_link="https://errors.ubuntu.com/problem/abc")
    _create(version="1.0", bucket=linked)
    _create(version="", kind=ProblemKind.INCREASED_RATE, bucket=None)
    path = tmp_path / "out.txt"
    call_command("phasing_overrides", "export", str(path), stderr=io.StringIO())
    Override.objects.all().delete()

    _import(tmp_path, path.read_text())

    assert sorted((o.version, o.kind, o.bucket_id) for o in Override.objects.all()) == [
        ("", ProblemKind.INCREASED_RATE, None),
        ("1.0", ProblemKind.NEW_BUCKET, linked.pk),
    ]
