"""What every page's footer shows: where the data comes from and what is failing since when.

Read lazily (one query, only on a page that shows the footer) and never by a template tag;
a view that already read it (the overview shows it on top) passes its own.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from overview.monitoring.status import service_status as read_service_status


def service_status(request: HttpRequest) -> dict[str, object]:
    return {"service_status": SimpleLazyObject(lambda: read_service_status(now=timezone.now()))}
