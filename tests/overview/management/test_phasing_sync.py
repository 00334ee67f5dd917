"""The phasing_sync and phasing_sources commands over the simulated archive."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from packages.models import Publication

pytestmark = pytest.mark.django_db


def test_the_sync_command_prints_a_summary(capsys, settings):
    settings.PHASING_SIMULATOR_PACKAGES = 20
    from packages.sources import simulated_archive

    simulated_archive.cache_clear()
    try:
        call_command("phasing_sync", "--no-crashes")
    finally:
        simulated_archive.cache_clear()
    out = capsys.readouterr().out
    assert "simulator:" in out and "new" in out and "0 errors" in out
    assert Publication.objects.exists()


def test_the_sources_check_command_says_what_answers(capsys, settings):
    settings.PHASING_SIMULATOR_PACKAGES = 10
    from packages.sources import simulated_archive

    simulated_archive.cache_clear()
    try:
        call_command("phasing_sources", "check")
    finally:
        simulated_archive.cache_clear()
    out = capsys.readouterr().out
    header, publications, crashes = out.splitlines()
    assert header.split("  ")[0:1] == ["source"] and "permission to change phasing" in header
    assert publications.startswith("simulator (publications)") and "yes: releases" in publications
    assert crashes.startswith("simulator (crashes)") and "no update in phasing" in crashes
