"""A library's update halted because its dependents crash more with it: the update page,
the halt email (the product's and Ubuntu's way) and the triagers' override form say so in
plain words, never a bucket's words about a problem that has no bucket."""

from __future__ import annotations

import pytest
from django.core import mail
from django.urls import reverse

from overview.controller.notifications import halt_notifications_create, notification_send
from overview.models import Override, ProblemKind
from packages.models import EventKind, PhasingState
from tests.factories import (
    PersonFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
)

pytestmark = [pytest.mark.django_db]

DETAIL = (
    "its dependents crash 3.1× (likely above 1.9×) as often with this version as with the "
    "previous one (firefox 4.2× (likely above 2.1×), 96 crash events with it; 2 other "
    "dependents); 210 crash events of 3 dependents, about 50% of their machines on it: "
    "above 1 with 99% confidence (sequential test of its dependents)"
)


@pytest.fixture
def halted_library():
    publication = PublicationFactory(
        release=ReleaseFactory(codename="noble", version="24.04"),
        source_package=SourcePackageFactory(name="openssl"),
        signer=PersonFactory(email="signer@example.org"),
        uploader=PersonFactory(email="uploader@example.org"),
        state=PhasingState.HALTED,
    )
    ProblemFactory(
        publication=publication,
        kind=ProblemKind.DEPENDENTS,
        bucket=None,
        report_count=96,
        system_count=0,
        difference=1.9,
        detail=DETAIL,
    )
    return publication


def test_the_update_page_says_its_dependents_crash_more_and_which(
    anonymous, halted_library, django_assert_num_queries
):
    with django_assert_num_queries(8):  # as any update page (tests/overview/pages/test_update.py)
        response = anonymous.get(reverse("overview:update", args=[halted_library.pk]))
    text = response.content.decode()
    assert "dependents crash more with this version" in text
    assert "Dependents crash more with this version" in text  # its kind
    assert "96 crash events of its dependents with this version" in text
    assert "firefox 4.2×" in text
    assert "from 0 systems" not in text and "None" not in text


def test_the_halt_email_says_it_in_plain_words(halted_library):
    event = PhasingEventFactory(
        publication=halted_library, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
    )
    created = halt_notifications_create([(halted_library, event)], now=event.created_at)
    notification_send(notification_id=created[0].pk, now=event.created_at)
    body = mail.outbox[0].body
    assert f"  - {DETAIL}" in body
    assert "new in this version: None" not in body and "0 systems" not in body


def test_ubuntus_way_of_emailing_names_it_dependents_crash_more(settings, halted_library):
    settings.PHASING_HALT_EMAILS = "ubuntu"
    event = PhasingEventFactory(
        publication=halted_library, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
    )
    created = halt_notifications_create([(halted_library, event)], now=event.created_at)
    assert {n.subject for n in created} == {"[noble/openssl] Dependents crash more"}


def test_a_triager_overrides_the_dependents_problem_from_the_overrides_page(
    triager, halted_library
):
    page = triager.get(reverse("triage:overrides")).content.decode()
    assert "Its dependents crash more with this version" in page
    response = triager.post(
        reverse("triage:override_rate"),
        {
            "source_package": "openssl",
            "kind": ProblemKind.DEPENDENTS,
            "version": halted_library.version,
            "reason": "firefox's own bug",
        },
    )
    assert response.status_code == 302
    override = Override.objects.get()
    assert (override.kind, override.bucket) == (ProblemKind.DEPENDENTS, None)
    listed = triager.get(reverse("triage:overrides")).content.decode()
    assert "dependents crash more" in listed
