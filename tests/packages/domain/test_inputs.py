"""What comes in from outside is checked at the door: names, versions, texts, links, dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from packages.domain import inputs

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("name", ["bash", "libpng1.6", "g++-14", "xz-utils", "0ad"])
def test_debian_source_names_are_accepted(name):
    assert inputs.source_name_problem(name) == ""


@pytest.mark.parametrize(
    "name",
    ["a", "tool/evil", "Tool", "-tool", ".tool", "to ol", "tool\x00", "x" * 201, "", 7, "<b>x</b>"],
)
def test_anything_else_is_not_a_source_name(name):
    assert inputs.source_name_problem(name)


@pytest.mark.parametrize(
    "version", ["1.0-1ubuntu0.1", "2:1.2~rc1+dfsg-3", "0.9", "1.0+really0.9-1"]
)
def test_debian_versions_are_accepted(version):
    assert inputs.version_problem(version) == ""


@pytest.mark.parametrize("version", ["", "1.0/../x", "a b", "<script>", "1.0\x00", "9" * 201])
def test_anything_else_is_not_a_version(version):
    assert inputs.version_problem(version)


def test_a_blank_version_is_accepted_only_where_blank_means_something():
    assert inputs.version_problem("", blank=True) == ""
    assert inputs.version_problem("") == "is empty"


@pytest.mark.parametrize(
    "link", ["javascript:alert(1)", "data:text/html,<b>", "ftp://x/y", "//evil.example/", "http://"]
)
def test_only_http_links_are_links(link):
    assert inputs.link_problem(link)
    assert not inputs.is_safe_link(link)


def test_http_and_https_links_that_fit_their_column_are_links():
    assert inputs.is_safe_link("https://errors.ubuntu.com/problem/abc")
    assert (
        inputs.link_problem("https://e.example/" + "x" * 1000) == "is longer than 1000 characters"
    )


def test_an_impossible_date_is_refused():
    assert inputs.moment_problem(datetime(9999, 1, 1, tzinfo=UTC), now=NOW)
    assert inputs.moment_problem(datetime(1970, 1, 1, tzinfo=UTC), now=NOW)
    assert inputs.moment_problem(NOW.replace(tzinfo=None), now=NOW) == "is not an aware datetime"
    assert inputs.moment_problem(NOW + timedelta(hours=23), now=NOW) == ""


def test_json_with_a_nul_byte_anywhere_is_refused():
    assert inputs.json_problem({"CMDLINE": "tool\x00"}) == "contains a NUL byte"
    assert inputs.json_problem({"k\x00": 1}) == "contains a NUL byte"
    assert inputs.json_problem({"k": object()}) == "is not plain JSON"
    assert inputs.json_problem({"k": ["ok"]}) == ""


def test_the_first_failing_field_is_named():
    assert (
        inputs.first_problem({"version": "", "source package": "is empty"})
        == "source package is empty"
    )
