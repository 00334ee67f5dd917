"""Admin views of buckets, problems, overrides, notifications and crash reports, and the
problems column and filter of the publication admin.

All of it is read-only here: buckets, reports and problems come from the crash source and
the controller, overrides are made on the triager pages (through overview.triage.overrides), and
emails are sent by the notification service. Crash reports are shown only to those who may
read their content (packages.permissions); for anyone else the model is not in the admin.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from overview.admin_outbox import OutboxAdmin
from overview.models import CrashReport, ErrorBucket, Notification, Override, Problem, ProblemKind
from overview.triage.overrides import override_revoke
from packages.admin.actions import ReadOnlyAdmin, action_with_reason, report_outcome
from packages.admin.forms import ReasonForm
from packages.admin.publications import PublicationAdmin as ArchivePublicationAdmin
from packages.models import Publication
from packages.permissions import acting_user, can_override_problems, can_read_crash_reports


@admin.register(ErrorBucket)
class ErrorBucketAdmin(ReadOnlyAdmin):
    list_display = (
        "__str__",
        "source_package",
        "first_seen",
        "last_seen",
        "retrace_failed",
        "public_page",
    )
    list_filter = ("retrace_failed",)
    search_fields = ("signature", "function", "source_package__name")
    list_select_related = ("source_package",)

    @admin.display(description="public page")
    def public_page(self, obj: ErrorBucket) -> str:
        return format_html('<a href="{}">problem {}</a>', obj.get_absolute_url(), obj.pk)


@admin.register(CrashReport)
class CrashReportAdmin(ReadOnlyAdmin):
    list_display = (
        "__str__",
        "bucket",
        "source_package",
        "version",
        "release",
        "architecture",
        "reported_at",
    )
    list_filter = ("release", "architecture")
    search_fields = ("source_package__name", "version", "external_id")
    list_select_related = ("bucket", "source_package", "release")
    ordering = ("-reported_at", "-id")

    def has_module_permission(self, request: HttpRequest) -> bool:
        return can_read_crash_reports(request.user) and super().has_module_permission(request)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return can_read_crash_reports(request.user)

    def view_on_site(self, obj: CrashReport) -> str:
        return reverse("triage:report", args=[obj.pk])


@admin.register(Problem)
class ProblemAdmin(ReadOnlyAdmin):
    list_display = (
        "publication",
        "kind",
        "bucket",
        "report_count",
        "system_count",
        "active",
        "detected_at",
    )
    list_filter = ("kind", "active", "publication__release")
    search_fields = ("publication__source_package__name", "bucket__signature")
    list_select_related = ("publication__source_package", "publication__release", "bucket")


@admin.register(Override)
class OverrideAdmin(ReadOnlyAdmin):
    list_display = (
        "source_package",
        "scope",
        "problem",
        "reason",
        "created_by_name",
        "created_at",
        "revoked_at",
    )
    list_filter = ("kind", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("source_package__name", "version", "reason")
    list_select_related = ("source_package", "bucket")
    actions = ("revoke",)

    @admin.display(description="version")
    def scope(self, obj: Override) -> str:
        return obj.version or "all versions"

    @admin.display(description="problem")
    def problem(self, obj: Override) -> str:
        if obj.bucket_id:
            return str(obj.bucket)
        return (
            Override.DEPENDENTS if obj.kind == ProblemKind.DEPENDENTS else Override.INCREASED_RATE
        )

    def has_override_problem_permission(self, request: HttpRequest) -> bool:
        return can_override_problems(request.user)

    @admin.action(description="Revoke the selected overrides", permissions=["override_problem"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[Override]):
        overrides = list(queryset.select_related("source_package", "bucket"))

        def perform(form) -> None:
            done, failed = [], []
            for override in overrides:
                try:
                    override_revoke(
                        override=override,
                        actor=acting_user(request),
                        reason=form.cleaned_data["reason"],
                    )
                except ValidationError as error:
                    failed.append((override, error))
                else:
                    done.append(override)
            report_outcome(self, request, "Revoked", done, failed)

        return action_with_reason(
            self,
            request,
            queryset,
            action="revoke",
            title="Revoke override",
            explanation="The problem halts phasing again at the controller's next tick.",
            form_class=ReasonForm,
            perform=perform,
            targets=overrides,
            submit_label="Revoke",
        )


@admin.register(Notification)
class NotificationAdmin(OutboxAdmin):
    pass


class ProblemsFilter(admin.SimpleListFilter):
    title = "problems"
    parameter_name = "problems"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin):
        return (
            ("unresolved", "With problems not overridden"),
            ("any", "With problems"),
            ("none", "Without problems"),
        )

    def queryset(self, request: HttpRequest, queryset: QuerySet[Publication]):
        of_row = Problem.objects.filter(publication=OuterRef("pk"))
        if self.value() == "any":
            return queryset.filter(Exists(of_row.filter(active=True)))
        if self.value() == "none":
            return queryset.exclude(Exists(of_row.filter(active=True)))
        if self.value() == "unresolved":
            return queryset.filter(Exists(of_row.unresolved()))
        return queryset


# The archive's publication admin, with the evidence this app adds to it: how many
# problems each update has, and a filter on them (as one customises UserAdmin).
admin.site.unregister(Publication)


@admin.register(Publication)
class PublicationAdmin(ArchivePublicationAdmin):
    def get_list_display(self, request: HttpRequest) -> Any:
        *columns, public_page = super().get_list_display(request)
        return (*columns, "problem_count", public_page)

    def get_list_filter(self, request: HttpRequest) -> Any:
        return (*super().get_list_filter(request), ProblemsFilter)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Publication]:
        return (
            super()
            .get_queryset(request)
            .annotate(active_problem_count=Problem.objects.active_count_of(OuterRef("pk")))
        )

    @admin.display(description="problems", ordering="active_problem_count")
    def problem_count(self, obj: Publication) -> int:
        count: int = vars(obj)["active_problem_count"]  # annotated by get_queryset
        return count


from overview.notices import admin as _notices_admin  # noqa: E402,F401  (webhook endpoints)
