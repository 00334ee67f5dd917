"""Error buckets, restricted crash reports and their counters (problems and overrides:
overview.models.problems).

A crash report's content (stack trace, environment, package versions, system) is for
members of the triagers group and superusers only; see packages.permissions.
"""

from __future__ import annotations

import hashlib

from django.db import models
from django.urls import reverse

from packages import links
from packages.domain import inputs
from packages.models import Release, SourcePackage
from packages.models.loading import LoadedFromRows


class ProblemType(models.TextChoices):
    """What a bucket holds: apport's ProblemType of its reports, as the error tracker keeps
    them apart (overview.evidence.sources.base.bucket_type)."""

    CRASH = "crash", "crash"
    INSTALL_FAILURE = "package", "install failure"


class ErrorBucket(LoadedFromRows, models.Model):
    """Crashes (or package install failures) grouped by signature, as the error tracker's
    buckets."""

    signature = models.CharField(max_length=1000, unique=True)
    problem_type = models.CharField(
        max_length=10, choices=ProblemType.choices, default=ProblemType.CRASH
    )
    function = models.CharField(max_length=500, blank=True)
    web_link = models.URLField(max_length=1000, blank=True)
    source_package = models.ForeignKey(
        SourcePackage, null=True, blank=True, on_delete=models.SET_NULL, related_name="buckets"
    )
    retrace_failed = models.BooleanField(default=False)
    first_seen = models.DateTimeField(null=True, blank=True)
    last_seen = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-last_seen", "id")

    def __str__(self) -> str:
        return self.function or self.signature[:80]

    def get_absolute_url(self) -> str:
        return reverse("overview:problem", args=[self.pk])

    @property
    def is_install_failure(self) -> bool:
        return self.problem_type == ProblemType.INSTALL_FAILURE

    @property
    def tracker_link(self) -> str:
        """The error tracker's page of the bucket: the source's own link when it is an
        http(s) URL (a link from a source is never rendered as anything a browser would
        run), else the configured bucket page (packages.links), else none."""
        if inputs.is_safe_link(self.web_link):
            return self.web_link
        return links.bucket_url(self.signature)


class CrashReport(models.Model):
    """One crash as Apport sends it. Restricted: triagers and superusers only.

    Its references carry no database constraint: the ingest writes them from ids it has
    just read or created in the same transaction, and a constraint checked per report
    cost the ingest a fifth of its time. Deletes still cascade (Django's collector)."""

    bucket = models.ForeignKey(
        ErrorBucket, on_delete=models.CASCADE, related_name="reports", db_constraint=False
    )
    source_package = models.ForeignKey(
        SourcePackage, on_delete=models.CASCADE, related_name="crash_reports", db_constraint=False
    )
    version = models.CharField(max_length=200)
    release = models.ForeignKey(
        Release, on_delete=models.CASCADE, related_name="crash_reports", db_constraint=False
    )
    architecture = models.CharField(max_length=20)
    reported_at = models.DateTimeField()
    # Hash of the reporting system's identifier: counts distinct systems, names nobody.
    system_id = models.CharField(max_length=64)
    stack_trace = models.TextField()
    environment = models.JSONField(default=dict, blank=True)
    package_versions = models.JSONField(default=dict, blank=True)
    from_proposed = models.BooleanField(default=False)
    automated_testing = models.BooleanField(default=False)
    external_id = models.CharField(max_length=100, unique=True)

    class Meta:
        ordering = ("-reported_at", "-id")
        permissions = [("view_crash_report_content", "Can read restricted crash reports")]
        indexes = [
            # Reports list of a bucket, newest first.
            models.Index(name="crashreport_bucket_time_idx", fields=("bucket", "-reported_at")),
            # The judges' counters: whether a machine already reported in an hour (the
            # ingest's probe, overview.evidence.ingest_sql). SQLite, which recounts every
            # report of a release in the hours a batch touched, also has an index on
            # (release, reported_at) (migration crash_ingest_probes).
            models.Index(
                name="crashreport_release_system_idx",
                fields=("release", "system_id", "reported_at"),
            ),
        ]

    def __str__(self) -> str:
        return f"Crash report {self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("triage:report", args=[self.pk])


class CrashCounter(models.Model):
    """Daily crash count per release, package and version: the error tracker's counters."""

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="+")
    source_package = models.ForeignKey(SourcePackage, on_delete=models.CASCADE, related_name="+")
    version = models.CharField(max_length=200)
    day = models.DateField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                name="one_counter_per_day", fields=("release", "source_package", "version", "day")
            )
        ]

    def __str__(self) -> str:
        return f"{self.source_package_id} {self.version} {self.day}: {self.count}"


class BucketVersionStat(models.Model):
    """Reports and distinct systems per bucket and version: what new-bucket detection reads.

    Kept up to date by the ingest, like the error tracker's counters, so the controller
    never aggregates the (large) crash report table.
    """

    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="+")
    source_package = models.ForeignKey(SourcePackage, on_delete=models.CASCADE, related_name="+")
    version = models.CharField(max_length=200)
    bucket = models.ForeignKey(ErrorBucket, on_delete=models.CASCADE, related_name="version_stats")
    reports = models.PositiveIntegerField(default=0)
    systems = models.PositiveIntegerField(default=0)
    # The span of the counted reports: what the problem page shows, once reports are purged.
    first_reported = models.DateTimeField(null=True, blank=True)
    last_reported = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                name="one_stat_per_bucket_version",
                fields=("release", "source_package", "version", "bucket"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.bucket_id} in {self.version}: {self.reports} reports, {self.systems} systems"


def system_key(release_id: int, source_package_id: int, version: str, system_id: str) -> int:
    """A system at a release, package and version as one number: the first 8 bytes of the
    SHA-256 of "release/package/version/system", signed. SYSTEM_KEY_SQL is the same in
    PostgreSQL's SQL, for the ingest's set-based statements (a test holds them equal)."""
    text = f"{release_id}/{source_package_id}/{version}/{system_id}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


# system_key in SQL, over the row's own columns.
SYSTEM_KEY_SQL = (
    "('x' || encode(substr(sha256(convert_to(release_id || '/' || source_package_id "
    "|| '/' || version || '/' || system_id, 'UTF8')), 1, 8), 'hex'))::bit(64)::bigint"
)


class BucketSystem(models.Model):
    """A system seen crashing in a bucket at a version: how distinct systems are counted
    without the reports, which the retention purges (overview.evidence.retention).

    Grows with distinct systems per bucket and version, not with reports. The ingest adds
    a batch's systems at random places in its unique index, so that index is kept narrow:
    the bucket and one number for the rest (`key`, system_key), 16 bytes where the
    columns themselves took over a hundred (a sixth of the size, so that far more of it
    stays in memory as the table grows). Two systems of one bucket whose keys collide
    would be counted as one: about one chance in 40 million for a bucket with a million."""

    # As a report's (above): no database constraint, checked per row; and no index of
    # their own for release and package, never read alone.
    release = models.ForeignKey(
        Release, on_delete=models.CASCADE, related_name="+", db_constraint=False, db_index=False
    )
    source_package = models.ForeignKey(
        SourcePackage,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    version = models.CharField(max_length=200)
    # The bucket leads the unique key, which so also serves a bucket's own systems (its
    # page): one index fewer to write for every report the ingest stores.
    bucket = models.ForeignKey(
        ErrorBucket,
        on_delete=models.CASCADE,
        related_name="+",
        db_constraint=False,
        db_index=False,
    )
    system_id = models.CharField(max_length=64)
    key = models.BigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(name="one_system_key_per_bucket", fields=("bucket", "key"))
        ]

    def __str__(self) -> str:
        return f"{self.system_id[:12]} in {self.bucket_id} {self.version}"

    def save(self, *args, **kwargs):
        """The key follows the columns, whoever saves the row (factories, the admin)."""
        self.key = system_key(self.release_id, self.source_package_id, self.version, self.system_id)
        super().save(*args, **kwargs)
