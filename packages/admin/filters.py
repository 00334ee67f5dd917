"""Changelist filters of the archive admins' console."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest

from packages.models import ACTIVE_STATES, PhasingState

if TYPE_CHECKING:
    from django.contrib.admin.filters import _ListFilterChoices

IN_PHASING = "in-phasing"
EVERY_STATE = "all"


class PublicationStateFilter(admin.SimpleListFilter):
    """Opens on the updates in phasing (phasing, paused or halted), the few an archive admin
    acts on, not on every publication ever seen; "All" clears it. Its parameter is the one
    a plain state filter has, so links that pick one state work as before."""

    title = "state"
    parameter_name = "state__exact"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [
            (IN_PHASING, "In phasing (phasing, paused or halted)"),
            *((state.value, state.label) for state in PhasingState),
            (EVERY_STATE, "All"),
        ]

    def value(self) -> str:
        return super().value() or IN_PHASING

    def choices(self, changelist: ChangeList) -> Iterator[_ListFilterChoices]:
        # Django's own first choice clears the parameter, which here means the default:
        # leave it out, lookups() offers an explicit "All".
        choices = iter(super().choices(changelist))
        next(choices)
        yield from choices

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == EVERY_STATE:
            return queryset
        if value == IN_PHASING:
            return queryset.filter(state__in=ACTIVE_STATES)
        return queryset.filter(state=value)
