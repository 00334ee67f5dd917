"""Links out, built from configured URL templates: Ubuntu's by default, anyone's by setting."""

from __future__ import annotations

import hashlib

import pytest
from django.core import checks

from overview.monitoring.checks import link_templates_usable
from packages import links
from tests.factories import PersonFactory, PublicationFactory, ReleaseFactory, SourcePackageFactory


def test_the_defaults_point_at_launchpad_and_the_error_tracker():
    assert links.source_url("openssl") == (
        "https://launchpad.net/ubuntu/+source/openssl/+publishinghistory"
    )
    assert links.version_url("openssl", "3.0.13-0ubuntu3.1") == (
        "https://launchpad.net/ubuntu/+source/openssl/3.0.13-0ubuntu3.1"
    )
    assert links.bug_url(2066054) == "https://bugs.launchpad.net/bugs/2066054"
    assert links.person_url("enr0n") == "https://launchpad.net/~enr0n"
    assert links.package_errors_url("openssl") == (
        "https://errors.ubuntu.com/?package=openssl&period=month"
    )


def test_the_changes_file_is_named_without_the_epoch_as_launchpad_serves_it():
    assert links.changes_url("tzdata", "1:2024a-3ubuntu1.1") == (
        "https://launchpad.net/ubuntu/+archive/primary/+files/tzdata_2024a-3ubuntu1.1_source.changes"
    )
    # The version page keeps the epoch, quoted.
    assert links.version_url("tzdata", "1:2024a-3ubuntu1.1").endswith(
        "/tzdata/1%3A2024a-3ubuntu1.1"
    )


def test_a_bucket_links_to_its_problem_page_by_the_sha1_of_its_id():
    signature = "/usr/bin/foo:11:main"
    assert links.bucket_url(signature) == (
        f"https://errors.ubuntu.com/problem/{hashlib.sha1(signature.encode()).hexdigest()}"
    )


def test_a_self_hosted_archive_points_at_its_own_tracker(settings):
    settings.PHASING_LINK_BUG = "https://bugs.example.org/show_bug.cgi?id={bug}"
    settings.PHASING_LINK_BUCKET = "https://crashes.example.org/bucket/?id={signature}"
    assert links.bug_url(7) == "https://bugs.example.org/show_bug.cgi?id=7"
    assert links.bucket_url("a b/c") == "https://crashes.example.org/bucket/?id=a%20b%2Fc"


def test_an_empty_template_gives_plain_text_and_no_link(settings):
    settings.PHASING_LINK_VERSION = ""
    assert links.version_url("hello", "1.0") == ""
    assert links.anchor(links.version_url("hello", "1.0"), "1.0<b>") == "1.0&lt;b&gt;"


def test_hostile_names_are_quoted_into_the_url_and_escaped_in_the_text():
    html = links.anchor(links.version_url('x"><script>', "1.0"), '"><script>alert(1)</script>')
    assert "<script>" not in html
    assert 'href="https://launchpad.net/ubuntu/+source/x%22%3E%3Cscript%3E/1.0"' in html
    # Nothing in a name can change the scheme or the host.
    assert links.person_url("@evil.example.org").startswith("https://launchpad.net/~%40evil")


def test_a_template_that_is_not_http_or_names_an_unknown_placeholder_fails_the_checks(settings):
    settings.PHASING_LINK_SOURCE = "javascript:alert('{source}')"
    settings.PHASING_LINK_BUG = "https://bugs.example.org/{number}"
    errors = link_templates_usable(None)
    assert [e.id for e in errors] == ["overview.E003", "overview.E003"]
    assert all(isinstance(e, checks.Error) for e in errors)
    # And a template that slipped through still never yields a link that is not http(s).
    assert links.source_url("hello") == ""


def test_the_people_of_an_upload_link_to_their_pages_each_once():
    alice = PersonFactory.build(account_name="alice", name="Alice <A>")
    bob = PersonFactory.build(account_name="bob", name="Bob")
    html = links.people_html(uploader=bob, signer=alice, sponsor=alice)
    assert html == (
        'changes by <a class="out" href="https://launchpad.net/~bob" rel="noopener">Bob</a>, '
        'sponsored (signed) by <a class="out" href="https://launchpad.net/~alice" '
        'rel="noopener">Alice &lt;A&gt;</a>'
    )


def test_closed_bugs_link_each_bug():
    html = links.bugs_html([1, 22])
    assert html == (
        'closes LP: <a class="out" href="https://bugs.launchpad.net/bugs/1" rel="noopener">#1</a>, '
        '<a class="out" href="https://bugs.launchpad.net/bugs/22" rel="noopener">#22</a>'
    )


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen_now")
def test_the_history_page_links_the_package_versions_changes_bugs_and_people(anonymous):
    package = SourcePackageFactory(name="hello")
    PublicationFactory(
        source_package=package,
        release=ReleaseFactory(codename="noble"),
        version="2.10-3ubuntu0.1",
        previous_version="2.10-3",
        closed_bugs=[2066054],
        uploader=PersonFactory(account_name="bob", name="Bob"),
        signer=PersonFactory(account_name="alice", name="Alice"),
    )
    html = anonymous.get("/source/hello/").content.decode()
    assert 'href="https://launchpad.net/ubuntu/+source/hello/+publishinghistory"' in html
    assert 'href="https://errors.ubuntu.com/?package=hello&amp;period=month"' in html
    assert 'href="https://launchpad.net/ubuntu/+source/hello/2.10-3ubuntu0.1"' in html
    assert 'href="https://launchpad.net/ubuntu/+source/hello/2.10-3"' in html
    assert (
        'href="https://launchpad.net/ubuntu/+archive/primary/+files/'
        'hello_2.10-3ubuntu0.1_source.changes"' in html
    )
    assert 'href="https://bugs.launchpad.net/bugs/2066054"' in html
    assert (
        'href="https://launchpad.net/~bob"' in html
        and 'href="https://launchpad.net/~alice"' in html
    )


@pytest.mark.django_db
@pytest.mark.usefixtures("frozen_now")
def test_with_every_template_empty_the_history_page_names_without_linking_out(anonymous, settings):
    for setting in links.PLACEHOLDERS:
        setattr(settings, setting, "")
    PublicationFactory(
        source_package=SourcePackageFactory(name="hello"),
        closed_bugs=[2066054],
        uploader=PersonFactory(account_name="bob", name="Bob"),
    )
    html = anonymous.get("/source/hello/").content.decode()
    assert 'class="out"' not in html
    assert "#2066054" in html and "Bob" in html
