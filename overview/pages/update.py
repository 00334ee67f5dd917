"""The page of one update: every fact about it, and for archive admins its actions.

Views stay thin: overview.pages.update_reads reads, the forms check, and every write goes
through packages.services.person_actions or the sign-off services, as the admin's do. A
write is a POST answered by a redirect back here with a message (POST-redirect-GET); bad
input is the page again with the form's errors and a 400; an action the update's state
refuses, the same with a 409.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.cache import patch_cache_control
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_POST
from django.views.defaults import permission_denied

from overview.evidence.fleet_reads import fleet_counts
from overview.pages import kept, update_reads
from overview.pages.update_forms import ACTION_SPECS, SignOffForm, action_form
from packages.dependency_warnings import needs_behind, warning_lines
from packages.models import Publication, ScheduledChange, ScheduledState
from packages.permissions import acting_user, can_change_phasing, can_read_crash_reports
from packages.services.person_actions import publication_act, target_percentage
from packages.services.scheduled import scheduled_change_cancel, scheduled_change_sign_off


def _page(
    request: HttpRequest,
    pk: int,
    *,
    bound: dict[str, object] | None = None,
    sign_off: tuple[int, SignOffForm] | None = None,
    status: int = 200,
) -> HttpResponse:
    now = timezone.now()
    can_read_reports = can_read_crash_reports(request.user)
    # What the page shows of the update changes with its data (the data version) and, for
    # what happens next and the measured uptake, with the minute: kept per version in this
    # process (overview.pages.kept), apart for those who may read crash reports. The
    # forms and messages below are each person's own.
    page, facts_html = kept.kept(
        ("update-page", pk, can_read_reports, int(now.timestamp() // 60)),
        lambda: _read(pk, now=now, can_read_reports=can_read_reports),
        version=kept.current_version(),
    )
    can_act = can_change_phasing(request.user)
    forms = []
    if can_act:
        bound = bound or {}
        # ?action=pause opens that form (the admin's object actions link to it).
        opened = request.GET.get("action", "")
        forms = [
            (spec, bound.get(spec.name) or action_form(spec.name), spec.name == opened)
            for spec in ACTION_SPECS.values()
        ]
    sign_off_forms = {
        change.pk: (sign_off[1] if sign_off and sign_off[0] == change.pk else SignOffForm())
        for change in [*page.awaiting_sign_off, *page.scheduled_later]
    }
    context = {
        "page": page,
        "publication": page.publication,
        "now": now,
        "can_act": can_act,
        "can_read_reports": can_read_reports,
        "facts_html": facts_html,
        "action_forms": forms,
        "awaiting": [(change, sign_off_forms[change.pk]) for change in page.awaiting_sign_off],
        "later": [(change, sign_off_forms[change.pk]) for change in page.scheduled_later],
    }
    response = render(request, "overview/update.html", context, status=status)
    if request.user.is_authenticated:
        # Reports and forms for one person: kept by no shared cache.
        patch_cache_control(response, private=True, no_store=True)
    return response


def _read(
    pk: int, *, now: datetime, can_read_reports: bool
) -> tuple[update_reads.UpdatePage, SafeString]:
    """The update's page and its facts (verdict, problems, group, chart, events) rendered."""
    page = update_reads.update_page(pk, now=now, can_read_reports=can_read_reports)
    # What the fleet agents measured, beside the estimate (one query).
    measured = fleet_counts([page.publication.pk], now=now)
    page.publication.fleet_counts = measured.get(page.publication.pk)  # type: ignore[attr-defined]
    facts = render_to_string(
        "overview/_update_facts.html",
        {
            "page": page,
            "publication": page.publication,
            "now": now,
            "can_read_reports": can_read_reports,
        },
    )
    return page, mark_safe(facts)  # noqa: S308 (our own template, autoescaped)


@require_GET
def update(request: HttpRequest, pk: int) -> HttpResponse:
    return _page(request, pk)


def _refuse_unless_archive_admin(request: HttpRequest) -> HttpResponse | None:
    if can_change_phasing(request.user):
        return None
    return permission_denied(request, PermissionDenied())


@require_POST
def act(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    """Pause, resume, halt, set or release this update, now or later, with a reason."""
    if action not in ACTION_SPECS:
        raise Http404("No such action.")
    refused = _refuse_unless_archive_admin(request)
    if refused is not None:
        return refused
    publication = get_object_or_404(
        Publication.objects.select_related("release", "source_package"), pk=pk
    )
    spec = ACTION_SPECS[action]
    form = action_form(action, request.POST)
    if not form.is_valid():
        return _page(request, pk, bound={action: form}, status=400)
    percentage = form.cleaned_data.get("percentage")
    try:
        outcome = publication_act(
            action=action,
            publication=publication,
            actor=acting_user(request),
            reason=form.cleaned_data["reason"],
            run_at=form.cleaned_data.get("run_at"),
            percentage=percentage,
        )
    except ValidationError as error:
        for message in error.messages:
            form.add_error(None, message)
        return _page(request, pk, bound={action: form}, status=409)
    if isinstance(outcome, ScheduledChange):
        when = []
        if outcome.run_at > outcome.created_at:
            when.append(f"scheduled for {outcome.run_at:%Y-%m-%d %H:%M} UTC")
        if outcome.outcome:
            when.append("waiting for a second archive admin's sign-off")
        messages.info(
            request, f"{outcome.what.capitalize()} {outcome.target_label}: {', '.join(when)}."
        )
    else:
        messages.success(request, f"{spec.verb}: {publication}.")
    target = target_percentage(action, percentage)
    if target is not None:
        for line in warning_lines(needs_behind(publication, target), target):
            messages.warning(request, line)
    return redirect(publication.get_update_url())


@require_POST
def sign_off(request: HttpRequest, pk: int, change_pk: int) -> HttpResponse:
    """A second archive admin approves or refuses a change waiting for sign-off; any
    archive admin cancels one scheduled for later."""
    refused = _refuse_unless_archive_admin(request)
    if refused is not None:
        return refused
    change = get_object_or_404(
        ScheduledChange.objects.select_related(
            "publication__source_package", "publication__release"
        ),
        pk=change_pk,
        publication_id=pk,
    )
    if change.state != ScheduledState.PENDING:
        messages.error(
            request, f"That change is {change.get_state_display().lower()}: nothing to decide."
        )
        return _page(request, pk, status=409)
    form = SignOffForm(request.POST)
    if not form.is_valid():
        return _page(request, pk, sign_off=(change.pk, form), status=400)
    actor, reason = acting_user(request), form.cleaned_data["reason"]
    try:
        if form.cleaned_data["decision"] == "approve":
            change = scheduled_change_sign_off(change=change, actor=actor, reason=reason)
        elif form.cleaned_data["decision"] == "cancel":
            change = scheduled_change_cancel(change=change, actor=actor, reason=reason)
        else:
            change = scheduled_change_cancel(
                change=change, actor=actor, reason=f"refused at sign-off: {reason}"
            )
    except ValidationError as error:
        for message in error.messages:
            form.add_error(None, message)
        return _page(request, pk, sign_off=(change.pk, form), status=409)
    if change.state == ScheduledState.CANCELLED:
        verb = "Cancelled" if form.cleaned_data["decision"] == "cancel" else "Refused"
        messages.success(request, f"{verb}: {change.what} {change.target_label}.")
    elif change.state == ScheduledState.FAILED:
        messages.error(request, f"Signed off; it ran and failed: {change.outcome}")
    elif change.state == ScheduledState.DONE:
        messages.success(request, f"Signed off and done: {change.outcome}.")
    else:
        messages.success(
            request, f"Signed off: {change.what} {change.target_label} runs at its time."
        )
    return redirect("overview:update", pk=pk)
