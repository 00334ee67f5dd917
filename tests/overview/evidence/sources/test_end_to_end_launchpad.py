"""A Launchpad that answers as the real one (tests/packages/sources/fake_launchpad.py)
through the sync, the controller and the write-back, as the product runs them."""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.evidence.sources.base import CrashAnswer
from overview.models import Notification
from packages.models import PhasingState, Publication, WriteBack
from packages.services.sync import publications_sync
from packages.services.writeback import percentages_write_back
from tests.overview.controller.fakes import new_bucket, tick
from tests.packages.sources.launchpad.fake_launchpad import FakeLaunchpad
from tests.packages.sources.launchpad.fakes import CREDENTIALS, make_source

pytestmark = pytest.mark.django_db


def test_a_halt_reaches_every_deb_emails_the_sponsor_once_and_is_read_back(
    http_server, sleeps, crashes
):
    """Bob made the changes, Alice signed them: Alice is the sponsor (not Launchpad's
    sponsor_link, Carol, who only asked for a copy), gets one email as signer and sponsor,
    and the 0% reaches every deb (never a ddeb) and is read back at the next sync."""
    launchpad = FakeLaunchpad(http_server)
    launchpad.people["bob"] = ("Bob Uploader", "bob@example.com")
    launchpad.publish(
        "hello",
        "2.10-3ubuntu0.1",
        names=("hello", "libhello1"),
        ddebs=True,
        binaries=(("amd64", 10), ("arm64", 10)),
        signer="alice",
        package_creator="bob",
        sponsor="carol",
    )
    source = make_source(http_server, sleeps, **CREDENTIALS)
    publications_sync(source, now=launchpad.now)
    publication = Publication.objects.get()
    crashes.answers["hello"] = CrashAnswer(problems=(new_bucket(),))

    tick(crashes, launchpad.now + timedelta(minutes=5))
    halt = publication.events.get(kind="halted")
    percentages_write_back(
        event_ids=[halt.pk], source=source, now=launchpad.now + timedelta(minutes=6)
    )
    launchpad.now += timedelta(minutes=10)
    publications_sync(source, now=launchpad.now, since=launchpad.now - timedelta(hours=1))

    publication.refresh_from_db()
    halt.refresh_from_db()
    assert publication.state == PhasingState.HALTED and halt.write_back == WriteBack.APPLIED
    assert {(n.person.account_name, n.roles) for n in Notification.objects.all()} == {
        ("alice", "signer, sponsor"),
        ("bob", "uploader"),
    }
    assert publication.source_values == [0, 0, 0, 0]
    assert not publication.readback_mismatch
    assert {b.percentage for b in launchpad.binaries if b.status == "Pending"} == {0}
