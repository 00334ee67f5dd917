"""The overview table's export: what a spreadsheet opens is data, never a formula."""

from __future__ import annotations

import csv
import io

import pytest

from overview.models import Problem
from overview.pages.tables import spreadsheet_safe
from tests.factories import NOW, ErrorBucketFactory, PublicationFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("cell", ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_a_cell_a_spreadsheet_would_run_starts_with_a_quote(cell):
    assert spreadsheet_safe(cell) == f"'{cell}"


def test_numbers_and_plain_text_are_left_alone():
    assert spreadsheet_safe(-5) == -5
    assert spreadsheet_safe("libpng1.6") == "libpng1.6"


def test_export_writes_cells_a_spreadsheet_would_run_as_plain_text(anonymous):
    publication = PublicationFactory(source_package=SourcePackageFactory(name="calc"))
    bucket = ErrorBucketFactory(function='=HYPERLINK("http://evil.example","x")')
    Problem.objects.create(
        publication=publication, kind="new_bucket", bucket=bucket, detected_at=NOW, last_seen_at=NOW
    )

    response = anonymous.get("/?_export=csv")

    [row] = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["Problems"] == '\'=HYPERLINK("http://evil.example","x")'
    assert not any(value.startswith(("=", "+", "-", "@")) for value in row.values())
