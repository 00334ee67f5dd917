from __future__ import annotations

from django.contrib.auth.decorators import login_required, permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from overview import selectors
from overview.models import CrashReport, ErrorBucket


def index(request: HttpRequest) -> HttpResponse:
    return render(request, "overview/index.html", {"releases": selectors.overview_by_release()})


def problem(request: HttpRequest, pk: int) -> HttpResponse:
    bucket = get_object_or_404(ErrorBucket, pk=pk)
    return render(request, "overview/problem.html", {"bucket": bucket})


@login_required
@permission_required("overview.view_crash_report_content", raise_exception=True)
def report(request: HttpRequest, pk: int) -> HttpResponse:
    crash = get_object_or_404(CrashReport.objects.select_related("bucket", "release"), pk=pk)
    return render(request, "overview/report.html", {"report": crash})
