"""Forms and filters of the triager pages: crash report filters, overriding, revoking."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q, QuerySet

from overview.models import BucketVersionStat, CrashReport, ErrorBucket, Problem, ProblemKind
from packages.models import SourcePackage
from packages.validators import validate_version


def _choices(values: set[str]) -> list[tuple[str, str]]:
    return [(value, value) for value in sorted(values)]


class CrashReportFilter(django_filters.FilterSet):
    """Version, release and architecture of the reports of one bucket.

    The choices come from the bucket's own reports in one query, so an empty choice
    list never offers a value that matches nothing.
    """

    version = django_filters.ChoiceFilter(label="Version", empty_label="Any version")
    release = django_filters.ChoiceFilter(
        field_name="release__codename", label="Release", empty_label="Any release"
    )
    architecture = django_filters.ChoiceFilter(label="Architecture", empty_label="Any architecture")

    class Meta:
        model = CrashReport
        fields = ("version", "release", "architecture")

    def __init__(self, *args, bucket: ErrorBucket, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        versions: set[str] = set()
        releases: set[str] = set()
        architectures: set[str] = set()
        for version, codename, architecture in (
            CrashReport.objects.filter(bucket=bucket)
            .order_by()
            .values_list("version", "release__codename", "architecture")
            .distinct()
        ):
            versions.add(version)
            releases.add(codename)
            architectures.add(architecture)
        self.versions = sorted(versions)
        self.filters["version"].extra["choices"] = _choices(versions)
        self.filters["release"].extra["choices"] = _choices(releases)
        self.filters["architecture"].extra["choices"] = _choices(architectures)


class _ScopeMixin(forms.Form):
    version = forms.CharField(
        required=False,
        max_length=200,
        validators=[validate_version],
        help_text="The version the problem is not caused by.",
    )
    all_versions = forms.BooleanField(
        required=False, label="All versions of the package", help_text="Instead of one version."
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=2000,
        help_text="Why this problem was not introduced by the update. Shown on the public pages.",
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Say why.")
        return reason

    def clean(self) -> dict:
        data = super().clean() or {}
        version = (data.get("version") or "").strip()
        if data.get("all_versions"):
            if version:
                self.add_error("version", "Give a version, or tick all versions, not both.")
            data["version"] = ""
        elif not version:
            self.add_error("version", "Give a version, or tick all versions.")
        else:
            data["version"] = version
        return data


class BucketOverrideForm(_ScopeMixin):
    """Override a new-bucket problem of a package for one version or for all of them."""

    source_package = forms.ModelChoiceField(queryset=SourcePackage.objects.none(), label="Package")
    field_order = ("source_package", "version", "all_versions", "reason")

    def __init__(self, *args, bucket: ErrorBucket, **kwargs) -> None:
        # The reports page also has the reports' filter, whose version is id_version.
        kwargs.setdefault("auto_id", "override_%s")
        super().__init__(*args, **kwargs)
        field = self.fields["source_package"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = packages_of_bucket(bucket)
        if bucket.source_package_id and "source_package" not in self.initial:
            field.initial = bucket.source_package_id


class RateOverrideForm(_ScopeMixin):
    """Override a problem of a whole version: its increased crash rate, or its dependents
    crashing more with it (a library's update)."""

    source_package = forms.CharField(max_length=200, label="Package")
    kind = forms.ChoiceField(
        choices=[
            (ProblemKind.INCREASED_RATE, "Increased crash rate"),
            (ProblemKind.DEPENDENTS, "Its dependents crash more with this version"),
        ],
        initial=ProblemKind.INCREASED_RATE,
        required=False,  # an older form (or script) that does not say: the rate
        label="Problem",
    )

    def clean_kind(self) -> str:
        return self.cleaned_data.get("kind") or ProblemKind.INCREASED_RATE

    field_order = ("source_package", "kind", "version", "all_versions", "reason")

    def clean_source_package(self) -> SourcePackage:
        name = self.cleaned_data["source_package"].strip()
        try:
            return SourcePackage.objects.get(name=name)
        except SourcePackage.DoesNotExist:
            raise forms.ValidationError(f"No package called {name!r}.") from None


class RevokeForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), max_length=2000, label="Why revoke it"
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Say why.")
        return reason


def packages_of_bucket(bucket: ErrorBucket) -> QuerySet[SourcePackage]:
    """The packages a bucket's crashes or problems are about: who an override can name."""
    return SourcePackage.objects.filter(
        Q(pk=bucket.source_package_id)
        # The bucket's counters, not its reports: they outlive the purge of old reports.
        | Q(pk__in=BucketVersionStat.objects.filter(bucket=bucket).values("source_package"))
        | Q(pk__in=Problem.objects.filter(bucket=bucket).values("publication__source_package"))
    ).order_by("name")
