"""Problems of publications (a new bucket, a rise in the crash rate, dependents crashing
more) and the triagers' overrides that say a problem is not the update's."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from overview.models.evidence import ErrorBucket
from packages.models import Publication, SourcePackage
from packages.models.loading import LoadedFromRows
from packages.validators import validate_version


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


class Problem(LoadedFromRows, models.Model):
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
