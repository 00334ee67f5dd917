"""Halt emails as Ubuntu's phased-updater sends them, when PHASING_HALT_EMAILS is "ubuntu".

phased-updater (ubuntu-archive-tools, ``create_email_notifications``) writes to the
upload's signer and its uploader (the Changed-By), with the subject
"[<release>/<package>] Possible regression" for new crash buckets and
"[<release>/<package>] Increase in crash rate" for a rise of the rate, Cc a team
address, and once per person, problem, package and version (its notices file). Here: one
email per halt and person (the Notification table's constraint), its subject by the
halt's problems (a new bucket first), none to a person already told of that problem for
that version, Cc PHASING_HALT_EMAILS_CC when set. The body is the product's own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from overview.models import Notification, Problem, ProblemKind
from packages.models import PhasingEvent, Publication

UBUNTU = "ubuntu"


def subject(publication: Publication, kinds: set[str]) -> str:
    where = f"[{publication.release.codename}/{publication.source_package.name}]"
    if ProblemKind.NEW_BUCKET in kinds:
        return f"{where} Possible regression"
    if ProblemKind.INCREASED_RATE in kinds or ProblemKind.DEPENDENTS not in kinds:
        return f"{where} Increase in crash rate"
    # Phasing's own kind (Ubuntu's phased-updater has none): said as plainly.
    return f"{where} Dependents crash more"


def ubuntu_halt_notifications(
    halts: Sequence[tuple[Publication, PhasingEvent]], *, now: datetime
) -> list[Notification]:
    """The (unsaved) notifications of these halts, Ubuntu's way."""
    publications = [publication for publication, _ in halts]
    kinds: dict[int, set[str]] = defaultdict(set)
    for publication_id, kind in Problem.objects.filter(publication__in=publications).values_list(
        "publication_id", "kind"
    ):
        kinds[publication_id].add(kind)
    told = set(
        Notification.objects.filter(publication__in=publications).values_list(
            "publication_id", "person_id", "subject"
        )
    )
    rows = []
    for publication, event in halts:
        about = subject(publication, kinds[publication.pk])[:300]
        people: dict[int, list[str]] = {}
        for role in ("signer", "uploader"):
            person = getattr(publication, role)
            if person is not None and person.email:
                people.setdefault(person.pk, []).append(role)
        for person_id, roles in people.items():
            if (publication.pk, person_id, about) in told:
                continue
            rows.append(
                Notification(
                    publication=publication,
                    event=event,
                    person_id=person_id,
                    roles=", ".join(roles),
                    subject=about,
                    created_at=now,
                )
            )
    return rows
