"""Halt emails as Ubuntu's phased-updater sends them (PHASING_HALT_EMAILS=ubuntu): to the
signer and the uploader, "[release/package] Possible regression" or "Increase in crash
rate", Cc the team address, once per person, problem and version."""

from __future__ import annotations

import pytest
from django.core import mail

from overview.controller.notifications import halt_notifications_create, notification_send
from overview.models import ProblemKind
from packages.models import EventKind, PhasingState
from tests.factories import (
    NOW,
    PersonFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture
def ubuntu_emails(settings):
    settings.PHASING_HALT_EMAILS = "ubuntu"
    settings.PHASING_HALT_EMAILS_CC = "sru-team@example.org"


def halt(kind):
    publication = PublicationFactory(
        release=ReleaseFactory(codename="noble", version="24.04"),
        source_package=SourcePackageFactory(name="hello"),
        signer=PersonFactory(email="signer@example.org"),
        uploader=PersonFactory(email="uploader@example.org"),
        sponsor=PersonFactory(email="sponsor@example.org"),
        state=PhasingState.HALTED,
    )
    ProblemFactory(publication=publication, kind=kind)
    event = PhasingEventFactory(
        publication=publication, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
    )
    return publication, event


def test_a_new_bucket_is_a_possible_regression_to_signer_and_uploader_cc_the_team(
    ubuntu_emails,
):
    publication, event = halt(ProblemKind.NEW_BUCKET)

    created = halt_notifications_create([(publication, event)], now=NOW)

    assert sorted(n.person.email for n in created) == ["signer@example.org", "uploader@example.org"]
    assert {n.subject for n in created} == {"[noble/hello] Possible regression"}
    notification_send(notification_id=created[0].pk, now=NOW)
    [email] = mail.outbox
    assert email.cc == ["sru-team@example.org"]


def test_a_rate_halt_is_an_increase_in_crash_rate(ubuntu_emails):
    publication, event = halt(ProblemKind.INCREASED_RATE)

    created = halt_notifications_create([(publication, event)], now=NOW)

    assert {n.subject for n in created} == {"[noble/hello] Increase in crash rate"}


def test_a_person_is_told_once_per_problem_package_and_version(ubuntu_emails):
    publication, event = halt(ProblemKind.INCREASED_RATE)
    halt_notifications_create([(publication, event)], now=NOW)
    again = PhasingEventFactory(
        publication=publication, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
    )

    assert halt_notifications_create([(publication, again)], now=NOW) == []


def test_the_products_own_emails_stay_the_default(settings):
    publication, event = halt(ProblemKind.NEW_BUCKET)

    created = halt_notifications_create([(publication, event)], now=NOW)

    assert len(created) == 3  # signer, uploader and sponsor
    assert all("halted in noble-updates" in n.subject for n in created)
    notification_send(notification_id=created[0].pk, now=NOW)
    assert mail.outbox[0].cc == []
