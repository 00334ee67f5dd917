"""How the JSON API shapes its answers: publications, buckets, scheduled changes, apt's
decisions, pages of results and their links."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.core.paginator import EmptyPage, Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from ninja.errors import HttpError

from overview.pages import machine_selectors, selectors
from overview.pages import outlook as outlook_of
from overview.pages.selectors import PublicationInPhasing
from overview.pages.wording import outlook_lines
from packages.domain import policy as policy_rules
from packages.models import Publication, ScheduledChange
from packages.public_names import public_name
from packages.services.scheduled import AWAITING_SIGN_OFF

DEFAULT_PER_PAGE = 25


MAX_PER_PAGE = 100


def _page(
    request: HttpRequest, items: QuerySet | Sequence[int], *, page: int, per_page: int
) -> Page:
    try:
        return Paginator(items, per_page).page(page)
    except EmptyPage as error:
        raise HttpError(404, f"page {page} does not exist") from error


def _page_links(request: HttpRequest, page: Page) -> dict[str, int | str | None]:
    def link(number: int) -> str:
        query = request.GET.copy()
        query["page"] = str(number)
        return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")

    return {
        "count": page.paginator.count,
        "next": link(page.next_page_number()) if page.has_next() else None,
        "previous": link(page.previous_page_number()) if page.has_previous() else None,
    }


def _policy_out(rules: policy_rules.Rules) -> dict:
    return {
        "start_percentage": rules.start,
        "step": rules.step,
        "interval_seconds": int(rules.interval.total_seconds()),
        "ceiling": rules.ceiling,
        "schedule": list(rules.schedule),
        "quiet_weekend": rules.quiet_weekend,
        "judge": rules.judge,
        "insufficient_gate": rules.insufficient_gate,
        "insufficient_max_hold_seconds": int(rules.insufficient_max_hold.total_seconds()),
        "watch_at_full_seconds": int(rules.watch_at_full.total_seconds()),
    }


def _verdict_out(publication: PublicationInPhasing) -> dict | None:
    assessment = getattr(publication, "assessment", None)
    if assessment is None:
        return None
    return {
        "verdict": assessment.verdict,
        "judge": assessment.judge,
        "evidence": assessment.evidence,
        "rate_ratio": assessment.ratio,
        "rate_ratio_low": assessment.ratio_low,
        "rate_ratio_high": assessment.ratio_high,
        "crash_events_new": assessment.crashes_new,
        "crash_events_previous": assessment.crashes_old,
        "crash_events_needed": assessment.crashes_needed,
        "share_running": assessment.share,
        "share_running_low": assessment.share_low,
        "share_running_high": assessment.share_high,
        "share_measured": assessment.share_measured,
        "uptake_hours": assessment.uptake_hours,
        "exposure_hours": assessment.exposure_hours,
        "crashes_averted": assessment.averted,
        "assessed_at": assessment.assessed_at,
    }


def _publication_out(
    request: HttpRequest,
    publication: PublicationInPhasing,
    *,
    rules: policy_rules.Rules,
    now: datetime,
) -> dict:
    outlook = outlook_of.publication_outlook(publication, rules=rules, now=now)
    history = publication.source_package.get_absolute_url()
    return {
        "id": publication.pk,
        "release": publication.release.codename,
        "release_version": publication.release.version,
        "source_package": publication.source_package.name,
        "version": publication.version,
        "previous_version": publication.previous_version,
        "pocket": publication.pocket,
        "date_published": publication.date_published,
        "phased_update_percentage": publication.phased_update_percentage,
        "state": publication.state,
        "hold_reason": publication.hold_reason,
        "last_change": publication.last_change,
        "policy": _policy_out(rules),
        "next_step": {
            "kind": outlook.kind,
            "text": "; ".join(outlook_lines(outlook)),
            "percentage": outlook.next_percentage,
            "at": outlook.next_at,
            "full_at": outlook.full_at,
        },
        "problems": [
            {
                "kind": view.problem.kind,
                "title": view.title,
                "bucket_id": view.problem.bucket_id,
                "url": request.build_absolute_uri(view.url) if view.url else None,
                "report_count": view.problem.report_count,
                "overridden": view.overridden,
            }
            for view in selectors.problem_views(publication)
        ],
        "verdict": _verdict_out(publication),
        "history_url": request.build_absolute_uri(
            f"{history}?release={publication.release.codename}"
        ),
        "events_url": request.build_absolute_uri(
            reverse("api:publication_events", args=[publication.pk])
        ),
    }


def _bucket_out(request: HttpRequest, bucket) -> dict:
    return {
        "id": bucket.pk,
        "signature": bucket.signature,
        "function": bucket.function,
        "problem_type": bucket.problem_type,
        "source_package": bucket.source_package.name if bucket.source_package else None,
        "first_seen": bucket.first_seen,
        "last_seen": bucket.last_seen,
        "error_tracker_url": bucket.tracker_link,
        "url": request.build_absolute_uri(bucket.get_absolute_url()),
    }


def update_out(publication: Publication) -> dict:
    return {
        "publication_id": publication.pk,
        "release": publication.release.codename,
        "source_package": publication.source_package.name,
        "version": publication.version,
        "phased_update_percentage": publication.phased_update_percentage,
        "state": publication.state,
    }


def _username(user) -> str | None:
    # Public: a display name or the role, never a login name.
    return public_name(user) if user is not None else None


def scheduled_change_out(change: ScheduledChange) -> dict:
    publication = change.publication
    release = change.release or (publication.release if publication else None)
    package = change.source_package or (publication.source_package if publication else None)
    return {
        "id": change.pk,
        "action": change.action,
        "what": change.what,
        "target": change.target_label,
        "publication_id": change.publication_id,
        "release": release.codename if release else None,
        "source_package": package.name if package else None,
        "percentage": change.percentage,
        "policy": change.policy,
        "run_at": change.run_at,
        "reason": change.reason,
        "state": change.state,
        "scheduled_by": public_name(change.created_by),
        "created_at": change.created_at,
        "sign_off_needed": change.is_pending and change.outcome == AWAITING_SIGN_OFF,
        "signed_off_by": _username(change.signed_off_by),
        "signed_off_at": change.signed_off_at,
        "cancelled_by": _username(change.cancelled_by),
        "cancelled_at": change.cancelled_at,
        "cancel_reason": change.cancel_reason,
        "ran_at": change.ran_at,
        "outcome": change.outcome,
    }


def decision_out(row: machine_selectors.MachineRow) -> dict:
    return {
        "publication_id": row.publication.pk,
        "draw": row.decision.draw,
        "included": row.decision.included,
        "included_from_percentage": row.decision.included_from_percentage,
        "included_at": row.included_at,
        "waiting_for": row.waiting_for,
        "installs": row.installs,
        "kept_back_for": [
            {
                "publication_id": kept.need.needed.pk,
                "source_package": kept.need.needed.source,
                "version": kept.need.needed.version,
                "relation": kept.need.why,
                "draw": kept.draw,
                "percentage": kept.need.needed.percentage,
                "explanation": kept.words,
            }
            for kept in row.kept_back
        ],
    }
