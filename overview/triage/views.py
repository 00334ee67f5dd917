"""Triager pages: the restricted crash reports behind a bucket, and overriding problems.

Anonymous people are sent to log in; signed-in people without the permission get a 403
whose page carries nothing of the report. Every write is a POST through
overview.triage.overrides.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_POST
from django.views.defaults import permission_denied

from overview.models import CrashReport, ErrorBucket, Override, ProblemKind
from overview.triage.forms import (
    BucketOverrideForm,
    CrashReportFilter,
    RateOverrideForm,
    RevokeForm,
    packages_of_bucket,
)
from overview.triage.overrides import override_create, override_revoke
from packages.domain import inputs
from packages.permissions import acting_user, can_override_problems, can_read_crash_reports

REPORTS_PER_PAGE = 50
OVERRIDES_PER_PAGE = 100

View = Callable[..., HttpResponse]


def _requires(check: Callable[..., bool]) -> Callable[[View], View]:
    """Signed in and allowed; every answer (the page, a 403, a redirect) is kept by no cache
    but the browser's own, and not even there."""

    def decorator(view: View) -> View:
        @cache_control(private=True, no_store=True)
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not check(request.user):
                # Answered here, not raised, so the 403 carries the headers above too.
                return permission_denied(request, PermissionDenied())
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


triager_required = _requires(can_read_crash_reports)
override_permission_required = _requires(can_override_problems)


def _bucket_overrides(bucket: ErrorBucket):
    return (
        Override.objects.filter(bucket=bucket)
        .select_related("source_package", "created_by", "revoked_by")
        .order_by("revoked_at", "-created_at")
    )


def _reports_page(
    request: HttpRequest,
    bucket: ErrorBucket,
    *,
    override_form: BucketOverrideForm | None = None,
    status: int = 200,
) -> HttpResponse:
    reports = bucket.reports.select_related("release", "source_package").order_by(
        "-reported_at", "-id"
    )
    report_filter = CrashReportFilter(request.GET or None, queryset=reports, bucket=bucket)
    page = Paginator(report_filter.qs, REPORTS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "bucket": bucket,
        "filter": report_filter,
        "page": page,
        "overrides": _bucket_overrides(bucket),
        "can_override": can_override_problems(request.user),
        "override_form": override_form
        or BucketOverrideForm(
            bucket=bucket, initial=_override_initial(request, bucket, report_filter.versions)
        ),
        "version_hints": report_filter.versions,
        "revoke_form": RevokeForm(),
    }
    return render(request, "triage/reports.html", context, status=status)


def _override_initial(request: HttpRequest, bucket: ErrorBucket, versions: list[str]) -> dict:
    """The override form starts from the version the reports are filtered by, and from the
    package of the report a triager came from (?package=, from the report's page)."""
    initial: dict = {}
    version = request.GET.get("version", "")
    if version in versions:
        initial["version"] = version
    name = request.GET.get("package", "")
    if name and not inputs.source_name_problem(name):
        package = packages_of_bucket(bucket).filter(name=name).first()
        if package is not None:
            initial["source_package"] = package.pk
    return initial


@triager_required
def bucket_reports(request: HttpRequest, pk: int) -> HttpResponse:
    bucket = get_object_or_404(ErrorBucket.objects.select_related("source_package"), pk=pk)
    return _reports_page(request, bucket)


@triager_required
def report(request: HttpRequest, pk: int) -> HttpResponse:
    crash = get_object_or_404(
        CrashReport.objects.select_related("bucket", "release", "source_package"), pk=pk
    )
    context = {"report": crash, "can_override": can_override_problems(request.user)}
    return render(request, "triage/report.html", context)


@override_permission_required
@require_POST
def bucket_override(request: HttpRequest, pk: int) -> HttpResponse:
    bucket = get_object_or_404(ErrorBucket.objects.select_related("source_package"), pk=pk)
    form = BucketOverrideForm(request.POST, bucket=bucket)
    if not form.is_valid():
        return _reports_page(request, bucket, override_form=form, status=400)
    data = form.cleaned_data
    try:
        override = override_create(
            source_package=data["source_package"],
            version=data["version"],
            kind=ProblemKind.NEW_BUCKET,
            bucket=bucket,
            actor=acting_user(request),
            reason=data["reason"],
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _reports_page(request, bucket, override_form=form, status=400)
    messages.success(request, _override_message(override))
    return redirect("triage:reports", pk=bucket.pk)


@triager_required
def overrides(request: HttpRequest) -> HttpResponse:
    return _overrides_page(request, RateOverrideForm())


def _overrides_page(
    request: HttpRequest, form: RateOverrideForm, status: int = 200
) -> HttpResponse:
    rows = Override.objects.select_related(
        "source_package", "bucket", "created_by", "revoked_by"
    ).order_by("revoked_at", "source_package__name", "version", "-created_at")
    if request.GET.get("show") != "all":
        rows = rows.filter(revoked_at__isnull=True)
    page = Paginator(rows, OVERRIDES_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "page": page,
        "show_all": request.GET.get("show") == "all",
        "rate_form": form,
        "revoke_form": RevokeForm(),
        "can_override": can_override_problems(request.user),
    }
    return render(request, "triage/overrides.html", context, status=status)


@override_permission_required
@require_POST
def rate_override(request: HttpRequest) -> HttpResponse:
    form = RateOverrideForm(request.POST)
    if not form.is_valid():
        return _overrides_page(request, form, status=400)
    data = form.cleaned_data
    try:
        override = override_create(
            source_package=data["source_package"],
            version=data["version"],
            kind=data["kind"],
            bucket=None,
            actor=acting_user(request),
            reason=data["reason"],
        )
    except ValidationError as error:
        form.add_error(None, error)
        return _overrides_page(request, form, status=400)
    messages.success(request, _override_message(override))
    return redirect("triage:overrides")


@override_permission_required
@require_POST
def revoke(request: HttpRequest, pk: int) -> HttpResponse:
    override = get_object_or_404(Override.objects.select_related("source_package", "bucket"), pk=pk)
    form = RevokeForm(request.POST)
    if form.is_valid():
        was_live = override.is_live
        override_revoke(
            override=override, actor=acting_user(request), reason=form.cleaned_data["reason"]
        )
        if was_live:
            messages.success(request, f"Revoked the override of {override}.")
        else:
            messages.info(request, f"The override of {override} was already revoked.")
    else:
        messages.error(request, "Revoking an override needs a reason; nothing changed.")
    return _back(request, override)


def _back(request: HttpRequest, override: Override) -> HttpResponseRedirect:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return HttpResponseRedirect(target)
    if override.bucket_id:
        return redirect("triage:reports", pk=override.bucket_id)
    return redirect("triage:overrides")


def _override_message(override: Override) -> str:
    who = override.created_by_name or "an import"
    when = override.created_at.strftime("%Y-%m-%d %H:%M UTC")
    return f"Overridden: {override} (by {who}, {when})."
