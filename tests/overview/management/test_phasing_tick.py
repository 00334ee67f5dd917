"""The phasing_tick command: one line per update, a dry run that changes nothing."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from packages.services import (
    publication_pause,
)
from tests.factories import (
    PublicationFactory,
    UserFactory,
)
from tests.overview.controller.fakes import HOURS, T0

pytestmark = pytest.mark.django_db


def test_a_dry_run_prints_the_plan_and_changes_nothing(capsys, monkeypatch, crashes):
    publication = PublicationFactory(last_increase_at=T0)
    paused = PublicationFactory(last_increase_at=T0)
    publication_pause(
        publication=paused, actor=UserFactory(username="ana"), reason="asking upstream", now=T0
    )
    monkeypatch.setattr("overview.controller.tick.configured_crash_source", lambda: crashes)
    call_command("phasing_tick", "--now", (T0 + 6 * HOURS).isoformat(), "--dry-run")
    out = capsys.readouterr().out
    assert f"{publication.source_package.name} {publication.version}: advance 10→20" in out
    assert "hold: paused by a person: asking upstream" in out
    assert "dry run, nothing changed" in out
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.events.count() == 0


def test_the_tick_command_refuses_a_moment_without_a_time_zone():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="time zone"):
        call_command("phasing_tick", "--now", "2026-12-01T00:00:00")


def test_a_dry_run_lists_updates_by_release_then_package(capsys, monkeypatch, crashes):
    from tests.factories import ReleaseFactory, SourcePackageFactory

    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    # Created out of order, so the controller's own order (by id) is not the answer.
    for release, name in ((noble, "zsh"), (jammy, "vim"), (noble, "bash"), (jammy, "apt")):
        PublicationFactory(
            release=release, source_package=SourcePackageFactory(name=name), last_increase_at=T0
        )
    monkeypatch.setattr("overview.controller.tick.configured_crash_source", lambda: crashes)

    call_command("phasing_tick", "--now", (T0 + 6 * HOURS).isoformat(), "--dry-run")

    lines = capsys.readouterr().out.splitlines()[:-1]
    assert [line.split(" ")[:2] for line in lines] == [
        ["jammy", "apt"],
        ["jammy", "vim"],
        ["noble", "bash"],
        ["noble", "zsh"],
    ]


def test_a_reason_with_line_breaks_and_terminal_escapes_is_printed_escaped(
    capsys, monkeypatch, crashes
):
    paused = PublicationFactory(last_increase_at=T0)
    publication_pause(
        publication=paused,
        actor=UserFactory(username="ana"),
        reason="asking\x1b[2J upstream\r\nnoble bash 1.0: advance 10→100",
        now=T0,
    )
    monkeypatch.setattr("overview.controller.tick.configured_crash_source", lambda: crashes)

    call_command("phasing_tick", "--now", (T0 + 6 * HOURS).isoformat(), "--dry-run")

    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out
    assert len(out.splitlines()) == 2  # the paused update and the summary: no forged line
    assert "asking\\x1b[2J upstream\\r\\nnoble bash 1.0: advance 10→100" in out
