from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from packages.models import SourcePackage


def history(request: HttpRequest, name: str) -> HttpResponse:
    package = get_object_or_404(SourcePackage, name=name)
    publications = package.publications.select_related("release").order_by("-date_published")
    return render(request, "packages/history.html", {"package": package, "publications": publications})
