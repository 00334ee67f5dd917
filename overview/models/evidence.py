"""Error buckets, restricted crash reports, their counters, problems of publications and
overrides.

A crash report's content (stack trace, environment, package versions, system) is for
members of the triagers group and superusers only; see packages.permissions.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse

from packages import links
from packages.domain import inputs
from packages.models import Publication, Release, SourcePackage
from packages.validators import validate_version


class ProblemType(models.TextChoices):
    """What a bucket holds: apport's ProblemType of its reports, as the error tracker keeps
    them apart (overview.evidence.sources.base.bucket_type)."""

    CRASH = "crash", "crash"
    INSTALL_FAILURE = "package", "install failure"


class ErrorBucket(models.Model):
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


class BucketSystem(models.Model):
    """A system seen crashing in a bucket at a version: how distinct systems are counted
    without the reports, which the retention purges (overview.evidence.retention).

    Grows with distinct systems per bucket and version, not with reports."""

    # As a report's (above): no database constraint, checked per row; and no index of
    # their own for release and package, which lead the unique key or are never read alone.
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
    bucket = models.ForeignKey(
        ErrorBucket, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    system_id = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                name="one_system_per_bucket_version",
                fields=("release", "source_package", "version", "bucket", "system_id"),
            )
        ]

    def __str__(self) -> str:
        return f"{self.system_id[:12]} in {self.bucket_id} {self.version}"


class ProblemKind(models.TextChoices):
    NEW_BUCKET = "new_bucket", "New in this version"
    INCREASED_RATE = "increased_rate", "Increased crash rate"
    # A library's update whose dependents crash more on machines that have it
    # (overview.judges.dependents): no bucket of its own, one per publication, like a rate.
    DEPENDENTS = "dependents", "Dependents crash more with this version"


# The kinds of problem about a whole version rather than one bucket: overridden per
# package and version, one per publication, and cleared when no longer reported.
VERSION_WIDE_KINDS = (ProblemKind.INCREASED_RATE, ProblemKind.DEPENDENTS)


class OverrideQuerySet(models.QuerySet["Override"]):
    def live(self) -> OverrideQuerySet:
        return self.filter(revoked_at__isnull=True)

    def covering(self) -> OverrideQuerySet:
        """Live overrides that cover the Problem row of the enclosing query.

        The one statement of what an override covers: the problem's package, its kind,
        the publication's version (or every version) and, for a new bucket, that bucket.
        """
        return (
            self.live()
            .filter(
                Q(version="") | Q(version=OuterRef("publication__version")),
                source_package=OuterRef("publication__source_package"),
                kind=OuterRef("kind"),
            )
            .filter(Q(kind__in=VERSION_WIDE_KINDS) | Q(bucket=OuterRef("bucket")))
        )


class ProblemQuerySet(models.QuerySet["Problem"]):
    def with_covering_override(self) -> ProblemQuerySet:
        """Each problem with `covering_override_id`: a live override that covers it, or None."""
        covering = Override.objects.covering().order_by("-created_at", "-id").values("pk")[:1]
        return self.annotate(covering_override_id=Subquery(covering))

    def unresolved(self) -> ProblemQuerySet:
        """Active problems no live override covers: what halts an update."""
        return self.filter(active=True).exclude(Exists(Override.objects.covering()))

    def active_count_of(self, publication: OuterRef) -> Coalesce:
        """How many active problems the enclosing query's publication has, as a subquery."""
        counted = (
            self.filter(publication=publication, active=True)
            .order_by()
            .values("publication")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(counted, output_field=models.IntegerField()), 0)


class Problem(models.Model):
    """A bucket new in this version, a clear rise in crash rate, or (a library's update)
    its dependents crashing more on machines that have it, for one publication."""

    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="problems")
    kind = models.CharField(max_length=20, choices=ProblemKind.choices)
    bucket = models.ForeignKey(
        ErrorBucket, null=True, blank=True, on_delete=models.CASCADE, related_name="problems"
    )
    web_link = models.URLField(max_length=1000, blank=True)
    report_count = models.PositiveIntegerField(default=0)
    system_count = models.PositiveIntegerField(default=0)
    difference = models.FloatField(null=True, blank=True)
    # The test and the figures that found it, in words (the sequential judge's, say).
    detail = models.CharField(max_length=500, blank=True)
    detected_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    # Cleared when the source no longer reports it (the rate fell back, say).
    active = models.BooleanField(default=True)

    objects = ProblemQuerySet.as_manager()

    class Meta:
        ordering = ("publication", "kind", "id")
        constraints = [
            models.UniqueConstraint(
                name="one_new_bucket_problem",
                fields=("publication", "bucket"),
                condition=Q(kind="new_bucket"),
            ),
            models.UniqueConstraint(
                name="one_rate_problem",
                fields=("publication",),
                condition=Q(kind="increased_rate"),
            ),
            models.UniqueConstraint(
                name="one_dependents_problem",
                fields=("publication",),
                condition=Q(kind="dependents"),
            ),
            models.CheckConstraint(
                name="new_bucket_problem_has_bucket",
                condition=~Q(kind="new_bucket") | Q(bucket__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        if self.kind == ProblemKind.INCREASED_RATE:
            return "increased crash rate"
        if self.kind == ProblemKind.DEPENDENTS:
            return "dependents crash more with this version"
        if self.bucket is not None and self.bucket.is_install_failure:
            return f"install failure: {self.bucket}"
        return str(self.bucket)

    @property
    def kind_label(self) -> str:
        """ "New in this version: install failure", say: the kind and what the bucket holds."""
        if self.kind == ProblemKind.NEW_BUCKET and self.bucket is not None:
            return f"{self.get_kind_display()}: {self.bucket.get_problem_type_display()}"
        return self.get_kind_display()

    @property
    def covering_override(self) -> int | None:
        """The id of a live override covering this problem, as with_covering_override()
        annotated it (a KeyError from a queryset that did not ask: never guess)."""
        value: int | None = vars(self)["covering_override_id"]
        return value

    @property
    def is_overridden(self) -> bool:
        return self.covering_override is not None


class Override(models.Model):
    """A triager's statement that a problem was not introduced by the update."""

    INCREASED_RATE = "increased-rate"
    DEPENDENTS = "dependents"

    source_package = models.ForeignKey(
        SourcePackage, on_delete=models.CASCADE, related_name="overrides"
    )
    # Blank: every version of the package.
    version = models.CharField(max_length=200, blank=True, validators=[validate_version])
    # Null with kind increased_rate or dependents: that problem; otherwise one bucket.
    bucket = models.ForeignKey(
        ErrorBucket, null=True, blank=True, on_delete=models.CASCADE, related_name="overrides"
    )
    kind = models.CharField(
        max_length=20, choices=ProblemKind.choices, default=ProblemKind.NEW_BUCKET
    )
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoke_reason = models.TextField(blank=True)

    objects = OverrideQuerySet.as_manager()

    class Meta:
        ordering = ("-created_at",)
        permissions = [("override_problem", "Can override problems")]
        constraints = [
            models.UniqueConstraint(
                name="one_live_override_per_bucket",
                fields=("source_package", "version", "bucket"),
                condition=Q(revoked_at__isnull=True, kind="new_bucket"),
            ),
            models.UniqueConstraint(
                name="one_live_rate_override",
                fields=("source_package", "version"),
                condition=Q(revoked_at__isnull=True, kind="increased_rate"),
            ),
            models.UniqueConstraint(
                name="one_live_dependents_override",
                fields=("source_package", "version"),
                condition=Q(revoked_at__isnull=True, kind="dependents"),
            ),
            models.CheckConstraint(
                name="bucket_override_has_bucket",
                condition=~Q(kind="new_bucket") | Q(bucket__isnull=False),
            ),
        ]
        indexes = [
            # Controller and overview: live overrides of the packages in phasing.
            models.Index(
                name="override_live_idx",
                fields=("source_package", "version"),
                condition=Q(revoked_at__isnull=True),
            )
        ]

    def __str__(self) -> str:
        scope = self.version or "all versions"
        things = {
            ProblemKind.INCREASED_RATE: self.INCREASED_RATE,
            ProblemKind.DEPENDENTS: self.DEPENDENTS,
        }
        thing = things.get(ProblemKind(self.kind), self.bucket)
        return f"{self.source_package} {scope}: {thing}"

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None
