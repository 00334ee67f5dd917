"""Filters of the overview table and the publications API; their state lives in the URL."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import QuerySet

from overview.models import Verdict
from packages.models import ACTIVE_STATES, PhasingState, Publication, Release

STATE_CHOICES = [(state.value, state.label) for state in PhasingState if state in ACTIVE_STATES]


class PublicationFilterForm(forms.Form):
    def clean(self) -> dict:
        cleaned = super().clean() or {}
        low, high = cleaned.get("percentage_min"), cleaned.get("percentage_max")
        if low is not None and high is not None and low > high:
            raise forms.ValidationError(
                "The lowest percentage (%(low)s) is above the highest (%(high)s).",
                params={"low": low, "high": high},
                code="percentage_range",
            )
        return cleaned


class PublicationFilter(django_filters.FilterSet):
    release = django_filters.ModelChoiceFilter(
        queryset=Release.objects.all(),
        to_field_name="codename",
        empty_label="All releases",
    )
    state = django_filters.ChoiceFilter(choices=STATE_CHOICES, empty_label="Any state")
    percentage_min = django_filters.NumberFilter(
        field_name="phased_update_percentage",
        lookup_expr="gte",
        label="From %",
        min_value=0,
        max_value=100,
    )
    percentage_max = django_filters.NumberFilter(
        field_name="phased_update_percentage",
        lookup_expr="lte",
        label="To %",
        min_value=0,
        max_value=100,
    )
    verdict = django_filters.ChoiceFilter(
        field_name="assessment__verdict",
        choices=Verdict.choices,
        empty_label="Any verdict",
        label="Verdict",
    )
    q = django_filters.CharFilter(
        field_name="source_package__name", lookup_expr="icontains", label="Package", max_length=200
    )

    class Meta:
        model = Publication
        fields = ("release", "state", "verdict", "percentage_min", "percentage_max", "q")
        form = PublicationFilterForm

    def filter_queryset(self, queryset: QuerySet) -> QuerySet:
        # A bad range is reported on the form and left out, not turned into an empty table.
        if "percentage_range" in {e.code for e in self.form.non_field_errors().as_data()}:
            self.form.cleaned_data.pop("percentage_min", None)
            self.form.cleaned_data.pop("percentage_max", None)
        return super().filter_queryset(queryset)

    def apply_to(self, queryset: QuerySet) -> QuerySet:
        """The same filters on another queryset (the summary counts, say)."""
        if not self.is_bound:
            return queryset
        self.errors  # noqa: B018 -- validates the form, as self.qs does
        return self.filter_queryset(queryset)
