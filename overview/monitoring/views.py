"""/healthz (public: says only what is missing) and /metrics (Prometheus, restricted).

Who may read /metrics: a scraper presenting `Authorization: Bearer <PHASING_METRICS_TOKEN>`
(when the setting is set), and signed-in people with the `overview.view_metrics`
permission (superusers have it; no group is given it). Anyone else gets 403. The figures are
aggregates only, but queue lengths and failures are nobody
else's business.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from overview.monitoring.health import health_checks
from overview.monitoring.metrics import PhasingCollector
from packages.permissions import can_read_metrics


@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    checks = health_checks(timezone.now())
    healthy = all(check.ok for check in checks)
    lines = [f"{check.name}: {check.detail}" for check in checks]
    body = ("ok\n" if healthy else "unhealthy\n") + "\n".join(lines) + "\n"
    return HttpResponse(body, status=200 if healthy else 503, content_type="text/plain")


def _may_read_metrics(request: HttpRequest) -> bool:
    token = settings.PHASING_METRICS_TOKEN
    if token:
        presented = request.headers.get("Authorization", "")
        if hmac.compare_digest(presented.encode(), f"Bearer {token}".encode()):
            return True
    return can_read_metrics(request.user)


@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    if not _may_read_metrics(request):
        return HttpResponse(
            "Metrics are for the monitoring system: present its bearer token, or sign in with "
            "the permission to read them.\n",
            status=403,
            content_type="text/plain",
        )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PhasingCollector(now=timezone.now()))
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
