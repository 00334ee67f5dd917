"""What the judges read and what they concluded.

Crash events per hour and version (the sequential judge's counts), versions of a package
seen in other packages' crash reports (how the share of machines on a new version is
measured), and each update's current assessment (its verdict, the evidence in figures, its
exposure), which every page, feed and the API read.
"""

from __future__ import annotations

from django.db import models

from packages.domain import policy
from packages.models import Publication, Release, SourcePackage


class HourlyCrashCount(models.Model):
    """Crashes of one version of one package in one release and UTC hour.

    `events` counts each machine once per bucket and hour, so a machine in a crash loop is
    one event: the sequential test assumes independent crashes. Reports from automated
    testing and -proposed never count, as in the error tracker's counters.
    """

    # No index of their own: the unique key and the (release, hour) index lead with them,
    # and every index is written again when the ingest adds to a count.
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="+", db_index=False)
    source_package = models.ForeignKey(
        SourcePackage, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    version = models.CharField(max_length=200)
    hour = models.DateTimeField()
    reports = models.PositiveIntegerField(default=0)
    events = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # Also the index of the judge's read: a package's versions in a release, by hour.
            models.UniqueConstraint(
                name="one_hourly_count", fields=("source_package", "release", "version", "hour")
            )
        ]
        indexes = [
            # The judge's read of how busy each hour of a release was.
            models.Index(name="hourlycount_release_hour_idx", fields=("release", "hour")),
        ]

    def __str__(self) -> str:
        return f"{self.source_package_id} {self.version} {self.hour:%Y-%m-%d %H}h: {self.events}"


class VersionSighting(models.Model):
    """Machines that reported a crash of another package while this binary package was
    installed at this version, in one release and UTC hour (from the reports' dependency
    versions). The share on a new version among them measures its uptake."""

    # No index of its own: the unique key leads with it.
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="+", db_index=False)
    binary = models.CharField(max_length=200)
    version = models.CharField(max_length=200)
    hour = models.DateTimeField()
    machines = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            # Also the index of the exposure read: a release's binaries, by hour.
            models.UniqueConstraint(
                name="one_sighting", fields=("release", "binary", "version", "hour")
            )
        ]

    def __str__(self) -> str:
        return f"{self.binary} {self.version} {self.hour:%Y-%m-%d %H}h: {self.machines}"


class Verdict(models.TextChoices):
    REGRESSED = "regressed", "Regressed"
    HEALTHY = "healthy", "Healthy"
    INSUFFICIENT = "insufficient", "Insufficient evidence"


class Assessment(models.Model):
    """An update's verdict and its evidence, as of the controller's last tick; assessed_at is
    the tick that found them (a tick that finds the same again does not rewrite the row)."""

    publication = models.OneToOneField(
        Publication, primary_key=True, on_delete=models.CASCADE, related_name="assessment"
    )
    judge = models.CharField(max_length=20, choices=policy.JUDGE_CHOICES)
    verdict = models.CharField(max_length=20, choices=Verdict.choices)
    # The words people read, with the figures: "crash rate 1.1× the previous version's ...".
    evidence = models.CharField(max_length=500)
    ratio = models.FloatField(null=True, blank=True)
    ratio_low = models.FloatField(null=True, blank=True)
    ratio_high = models.FloatField(null=True, blank=True)
    crashes_new = models.PositiveIntegerField(default=0)
    crashes_old = models.PositiveIntegerField(default=0)
    crashes_needed = models.PositiveIntegerField(default=0)
    # The estimated share of machines running the new version now, and its range.
    share = models.FloatField(default=0.0)
    share_low = models.FloatField(default=0.0)
    share_high = models.FloatField(default=0.0)
    uptake_hours = models.FloatField(default=0.0)
    # Machines seen in other packages' reports, and hours of the previous version's
    # crashes falling away, the uptake rests on (both 0: modelled only).
    sightings = models.PositiveIntegerField(default=0)
    measured_hours = models.PositiveIntegerField(default=0)
    # Σ share × hours since publication: machine-hours on the new version per machine.
    exposure_hours = models.FloatField(default=0.0)
    # Crashes a halt spared the machines that never took the update, over
    # PHASING_AVERTED_DAYS at 100% (None: not halted, or nothing to estimate from).
    averted = models.FloatField(null=True, blank=True)
    assessed_at = models.DateTimeField()

    class Meta:
        indexes = [
            # The overview's verdict filter.
            models.Index(name="assessment_verdict_idx", fields=("verdict",)),
        ]

    def __str__(self) -> str:
        return f"{self.publication_id}: {self.verdict} ({self.judge})"

    @property
    def share_measured(self) -> bool:
        """Whether the share rests on data (other packages' reports, the previous version's
        crashes falling away), not only on the model's belief."""
        return self.sightings > 0 or self.measured_hours > 0
