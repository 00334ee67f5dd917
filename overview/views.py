from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from overview import selectors
from overview.models import ErrorBucket


def index(request: HttpRequest) -> HttpResponse:
    return render(request, "overview/index.html", {"releases": selectors.overview_by_release()})


def problem(request: HttpRequest, pk: int) -> HttpResponse:
    bucket = get_object_or_404(ErrorBucket, pk=pk)
    return render(request, "overview/problem.html", {"bucket": bucket})
