"""What the operations pages read: the last run of each periodic job."""

from __future__ import annotations

from django.db import models


class PeriodicRun(models.Model):
    """The last run of each periodic job (the tick, the sync): for /metrics and /healthz,
    which run in the web processes while the jobs run in Celery workers."""

    name = models.CharField(max_length=40, unique=True)
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_duration_seconds = models.FloatField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        # /metrics: given to the people who watch the deployment, not to every staff user.
        permissions = [("view_metrics", "Can read the Prometheus metrics")]

    def __str__(self) -> str:
        return self.name
