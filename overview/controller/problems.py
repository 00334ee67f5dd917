"""Problems of publications, brought in line with each crash answer the controller gets."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q

from overview.evidence.sources.base import ProblemRecord
from overview.models import VERSION_WIDE_KINDS, ErrorBucket, Problem, ProblemKind

log = logging.getLogger(__name__)

# What a problem's latest crash answer may change of it.
_KEPT = (
    "report_count",
    "system_count",
    "difference",
    "web_link",
    "detail",
    "last_seen_at",
    "active",
)


def _buckets_of_problems(
    records: Sequence[ProblemRecord], *, now: datetime
) -> Callable[[ProblemRecord], ErrorBucket | None]:
    """Find or make the bucket of each reported problem, by signature or by its page.

    A bucket known only by its error-tracker URL (an override imported from Ubuntu's
    overrides file, say) is the same bucket as the problem the tracker reports there.
    """

    def lookup() -> tuple[dict[str, ErrorBucket], dict[str, ErrorBucket]]:
        signatures = {r.signature for r in records}
        links = {r.web_link for r in records if r.web_link}
        found = list(
            ErrorBucket.objects.filter(
                Q(signature__in=signatures) | Q(signature__in=links) | Q(web_link__in=links)
            )
        )
        by_link = {b.web_link: b for b in found if b.web_link}
        by_link.update({b.signature: b for b in found if b.signature in links})
        return {b.signature: b for b in found}, by_link

    by_signature, by_link = lookup()

    def bucket_of(record: ProblemRecord) -> ErrorBucket | None:
        return by_signature.get(record.signature) or by_link.get(record.web_link)

    missing = {r.signature: r for r in records if bucket_of(r) is None}
    if missing:
        ErrorBucket.objects.bulk_create(
            [
                ErrorBucket(
                    signature=r.signature,
                    function=r.function[:500],
                    web_link=r.web_link,
                    problem_type=r.bucket_type,
                    first_seen=now,
                    last_seen=now,
                )
                for r in missing.values()
            ],
            ignore_conflicts=True,
        )
        by_signature, by_link = lookup()
    relinked = {}
    for record in records:
        bucket = bucket_of(record)
        if bucket is not None and record.web_link and bucket.web_link != record.web_link:
            bucket.web_link = record.web_link
            relinked[bucket.pk] = bucket
    if relinked:
        ErrorBucket.objects.bulk_update(list(relinked.values()), ("web_link",))
    return bucket_of


def problems_record(
    answers: Mapping[int, Sequence[ProblemRecord]], *, now: datetime
) -> dict[int, list[Problem]]:
    """Bring each publication's problems in line with its latest crash answer.

    `answers` maps publication id → problems reported now. New ones are created,
    known ones refreshed, ones no longer reported marked inactive (never deleted:
    a halt's reasons stay visible). Returns publication id → its active problems, each
    with `is_overridden` known.
    Runs in the caller's transaction, in a fixed number of queries.
    """
    records = [p for problems in answers.values() for p in problems if p.signature]
    bucket_of = _buckets_of_problems(records, now=now)
    # Compared and updated by their own fields, read as plain rows: a tick at 20,000
    # updates in phasing reads tens of thousands and changes few (a model instance each
    # cost more than the rest of this function). The active ones are read again below,
    # as problems with their buckets.
    existing: dict[tuple[int, str, int | None], tuple[Any, ...]] = {
        (row[1], row[2], row[3]): row
        for row in Problem.objects.filter(publication_id__any=answers).values_list(
            "id", "publication_id", "kind", "bucket_id", *_KEPT
        )
    }
    to_create, to_update = [], []
    seen: set[tuple[int, str, int | None]] = set()
    for publication_id, problems in answers.items():
        for record in problems:
            bucket = bucket_of(record) if record.kind == ProblemKind.NEW_BUCKET else None
            key = (publication_id, record.kind, bucket.id if bucket else None)
            if key in seen:
                continue
            seen.add(key)
            row = existing.get(key)
            if row is None:
                to_create.append(
                    Problem(
                        publication_id=publication_id,
                        kind=record.kind,
                        bucket=bucket,
                        web_link=record.web_link,
                        report_count=record.report_count,
                        system_count=record.system_count,
                        difference=record.difference,
                        detail=record.detail[:500],
                        detected_at=now,
                        last_seen_at=now,
                    )
                )
                continue
            kept = dict(zip(_KEPT, row[4:], strict=True))
            fresh = {
                "report_count": record.report_count,
                "system_count": record.system_count,
                "difference": record.difference,
                "web_link": record.web_link or kept["web_link"],
                "detail": record.detail[:500] or kept["detail"],
                "last_seen_at": kept["last_seen_at"],
                "active": True,
            }
            if fresh != kept:
                to_update.append(Problem(id=row[0], **{**fresh, "last_seen_at": now}))
    for key, row in existing.items():
        # A new bucket stays a problem once seen; a rate (the version's own, or its
        # dependents') can fall back below the baseline.
        if key in seen or key[1] not in VERSION_WIDE_KINDS:
            continue
        kept = dict(zip(_KEPT, row[4:], strict=True))
        if kept["active"]:
            to_update.append(Problem(id=row[0], **{**kept, "active": False}))
    if to_create:
        Problem.objects.bulk_create(to_create, ignore_conflicts=True)
    if to_update:
        Problem.objects.bulk_update(to_update, _KEPT)
    active: dict[int, list[Problem]] = {pid: [] for pid in answers}
    for problem in (
        Problem.objects.filter(publication_id__any=answers, active=True)
        .with_covering_override()
        .select_related("bucket")
    ):
        active[problem.publication_id].append(problem)
    return active


def problems_record_each(
    answers: Mapping[int, Sequence[ProblemRecord]], *, now: datetime
) -> tuple[dict[int, list[Problem]], dict[int, Exception]]:
    """problems_record in one go; if the database refuses that, each publication alone, so
    one whose problems cannot be recorded is named with the error and the others are."""
    try:
        with transaction.atomic():
            return problems_record(answers, now=now), {}
    except Exception:  # one publication's records must not cost the others theirs
        log.exception("could not record the problems of every publication together")
    problems: dict[int, list[Problem]] = {}
    unrecorded: dict[int, Exception] = {}
    for publication_id, records in answers.items():
        try:
            with transaction.atomic():
                problems.update(problems_record({publication_id: records}, now=now))
        except Exception as exc:  # this one holds, with the error as its reason
            unrecorded[publication_id] = exc
    return problems, unrecorded


__all__ = ["problems_record", "problems_record_each"]
