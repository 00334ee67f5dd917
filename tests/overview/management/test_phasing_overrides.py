"""phasing_overrides import and export, in Ubuntu's phased-updates-overrides.txt format."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from overview.models import ErrorBucket, Override, ProblemKind
from overview.triage.overrides import override_revoke
from packages.models import SourcePackage
from tests.factories import ErrorBucketFactory, SourcePackageFactory, UserFactory
from tests.overview.triage.overrides_fakes import create_override

pytestmark = pytest.mark.django_db


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
    create_override(source_package=tool, version="1.0", bucket=linked)
    create_override(source_package=tool, version="", bucket=local)
    create_override(
        source_package=tool, version="1.0", kind=ProblemKind.INCREASED_RATE, bucket=None
    )
    # Phasing's own kind has no line in Ubuntu's file: never exported as a rate.
    create_override(source_package=tool, version="1.0", kind=ProblemKind.DEPENDENTS, bucket=None)
    revoked = create_override(source_package=SourcePackageFactory(name="gone"), version="9")
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
    create_override(version="1.0", bucket=linked)
    create_override(version="", kind=ProblemKind.INCREASED_RATE, bucket=None)
    path = tmp_path / "out.txt"
    call_command("phasing_overrides", "export", str(path), stderr=io.StringIO())
    Override.objects.all().delete()

    _import(tmp_path, path.read_text())

    assert sorted((o.version, o.kind, o.bucket_id) for o in Override.objects.all()) == [
        ("", ProblemKind.INCREASED_RATE, None),
        ("1.0", ProblemKind.NEW_BUCKET, linked.pk),
    ]
