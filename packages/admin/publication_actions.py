"""The archive admins' actions on publications: a reason page, then a service per row, now
or at a later time, each reported both ways. PublicationAdmin takes them as a mixin."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

if TYPE_CHECKING:
    pass

from packages import services
from packages.admin.actions import (
    action_with_reason,
    release_action,
    report_outcome,
)
from packages.admin.forms import (
    PolicyChangeForm,
    ReasonForm,
    ScheduledPercentageForm,
    ScheduledReasonForm,
)
from packages.dependency_warnings import needs_behind, warning_lines
from packages.models import (
    Publication,
    Release,
    ScheduledAction,
    ScheduledChange,
    SourcePackage,
)
from packages.permissions import acting_user
from packages.services.person_actions import target_percentage
from packages.services.scheduled import scheduled_change_create
from packages.services.sign_off import sign_off_required


def _releases_of(queryset: QuerySet[Publication]) -> list[Release]:
    return list(Release.objects.filter(pk__in=queryset.values("release_id")).order_by("-version"))


class PublicationActions(admin.ModelAdmin):
    """Pause, resume, halt, set, release, freeze, unfreeze and change the policy of the
    selected updates, each through its service (the sign-off rule included)."""

    def _per_publication(
        self,
        request: HttpRequest,
        queryset: QuerySet[Publication],
        *,
        action: str,
        title: str,
        explanation: str,
        verb: str,
        call: Callable[[Publication, forms.Form], object],
        form_class: type[ReasonForm] = ReasonForm,
    ) -> HttpResponse | None:
        publications = list(queryset.select_related("release", "source_package"))

        def perform(form: forms.Form) -> None:
            done, failed, scheduled = [], [], []
            for publication in publications:
                try:
                    outcome = call(publication, form)
                except ValidationError as error:
                    failed.append((publication, error))
                else:
                    if isinstance(outcome, ScheduledChange):
                        scheduled.append(outcome)
                    else:
                        done.append(publication)
            report_outcome(self, request, verb, done, failed, scheduled)

        return action_with_reason(
            self,
            request,
            queryset,
            action=action,
            title=title,
            explanation=explanation,
            form_class=form_class,
            perform=perform,
            targets=[_publication_line(p) for p in publications],
            targets_label="Updates",
            submit_label=title,
        )

    def _now_or_later(
        self,
        request: HttpRequest,
        publication: Publication,
        form: forms.Form,
        *,
        action: str,
        now: Callable[[str], object],
        percentage: int | None = None,
    ) -> object:
        """Run the action now through its service, or record it as a scheduled change:
        when a time is given, or when it waits for a second archive admin's sign-off."""
        run_at, reason = form.cleaned_data.get("run_at"), form.cleaned_data["reason"]
        target = target_percentage(action, percentage)
        if target is not None:
            # Past an update it needs: said, and with sign-off on, asked (sign_off_needed).
            for line in warning_lines(needs_behind(publication, target), target):
                self.message_user(request, line, messages.WARNING)
        if run_at is None and not sign_off_required(
            ScheduledChange(action=action, publication=publication, percentage=percentage)
        ):
            return now(reason)
        return scheduled_change_create(
            action=action,
            publication=publication,
            percentage=percentage,
            run_at=run_at,
            actor=acting_user(request),
            reason=reason,
        )

    @admin.action(description="Pause the selected updates", permissions=["change_phasing"])
    def pause(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="pause",
            title="Pause",
            explanation="A paused update keeps its percentage and does not advance until a person resumes it.",
            verb="Paused",
            form_class=ScheduledReasonForm,
            call=lambda p, form: self._now_or_later(
                request,
                p,
                form,
                action=ScheduledAction.PAUSE,
                now=lambda reason: services.publication_pause(
                    publication=p, actor=acting_user(request), reason=reason
                ),
            ),
        )

    @admin.action(description="Resume the selected updates", permissions=["change_phasing"])
    def resume(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="resume",
            title="Resume",
            explanation="A paused update resumes at its percentage; a halted one restarts at the "
            "policy's first step. The controller raises it again at the next interval. "
            "A problem that no triager has overridden halts it again at the next tick, "
            "and its signer and uploader are emailed again.",
            verb="Resumed",
            form_class=ScheduledReasonForm,
            call=lambda p, form: self._now_or_later(
                request,
                p,
                form,
                action=ScheduledAction.RESUME,
                now=lambda reason: services.publication_resume(
                    publication=p, actor=acting_user(request), reason=reason
                ),
            ),
        )

    @admin.action(
        description="Halt / pull the selected updates to 0%%", permissions=["change_phasing"]
    )
    def halt(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="halt",
            title="Halt",
            explanation="The percentage goes to 0% and the update stays halted until a person "
            "resumes it. About 1 machine in 100 still takes an update at 0%: pull a real "
            "regression from the archive too.",
            verb="Halted at 0%",
            call=lambda p, form: services.publication_halt(
                publication=p, actor=acting_user(request), reason=form.cleaned_data["reason"]
            ),
        )

    @admin.action(
        description="Set the percentage of the selected updates", permissions=["change_phasing"]
    )
    def set_percentage(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="set_percentage",
            title="Set percentage",
            explanation="Sets the phased-update percentage (0..100). On a halted update this is a "
            "decision to go on phasing from there.",
            verb="Percentage set",
            form_class=ScheduledPercentageForm,
            call=lambda p, form: self._now_or_later(
                request,
                p,
                form,
                action=ScheduledAction.SET,
                percentage=form.cleaned_data["percentage"],
                now=lambda reason: services.publication_set_percentage(
                    publication=p,
                    percentage=form.cleaned_data["percentage"],
                    actor=acting_user(request),
                    reason=reason,
                ),
            ),
        )

    @admin.action(
        description="Release the selected updates to everyone (100%%)",
        permissions=["change_phasing"],
    )
    def release_to_everyone(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="release_to_everyone",
            title="Release to everyone",
            explanation="Straight to 100% for every machine, for an urgent fix.",
            verb="Released to everyone",
            form_class=ScheduledReasonForm,
            call=lambda p, form: self._now_or_later(
                request,
                p,
                form,
                action=ScheduledAction.RELEASE,
                now=lambda reason: services.publication_release(
                    publication=p, actor=acting_user(request), reason=reason
                ),
            ),
        )

    @admin.action(
        description="Freeze the releases of the selected updates", permissions=["change_phasing"]
    )
    def freeze_release(self, request: HttpRequest, queryset: QuerySet[Publication]):
        releases = _releases_of(queryset)
        return release_action(
            self,
            request,
            queryset,
            releases,
            operation="freeze",
            action="freeze_release",
            targets=releases,
            targets_label="Releases",
        )

    @admin.action(
        description="Unfreeze the releases of the selected updates", permissions=["change_phasing"]
    )
    def unfreeze_release(self, request: HttpRequest, queryset: QuerySet[Publication]):
        releases = _releases_of(queryset)
        return release_action(
            self,
            request,
            queryset,
            releases,
            operation="unfreeze",
            action="unfreeze_release",
            targets=releases,
            targets_label="Releases",
        )

    @admin.action(
        description="Change the policy of the selected updates' packages or releases",
        permissions=["change_phasing"],
    )
    def change_policy(self, request: HttpRequest, queryset: QuerySet[Publication]):
        publications = list(queryset.select_related("release", "source_package"))
        packages = sorted({p.source_package for p in publications}, key=lambda s: s.name)
        releases = sorted({p.release for p in publications}, key=lambda r: r.version, reverse=True)

        def perform(form: forms.Form) -> None:
            assert isinstance(form, PolicyChangeForm)
            targets: list[SourcePackage] | list[Release] = (
                packages if form.cleaned_data["scope"] == "package" else releases
            )
            done: list[object] = []
            failed: list[tuple[object, ValidationError]] = []
            scheduled: list[ScheduledChange] = []
            for target in targets:
                package = target if isinstance(target, SourcePackage) else None
                release = target if isinstance(target, Release) else None
                try:
                    # Later, or now once a second archive admin signs it off.
                    if form.cleaned_data["run_at"] is not None or sign_off_required(
                        ScheduledChange(
                            action=ScheduledAction.POLICY,
                            source_package=package,
                            release=release,
                            policy=form.policy_fields(),
                        )
                    ):
                        scheduled.append(
                            scheduled_change_create(
                                action=ScheduledAction.POLICY,
                                source_package=package,
                                release=release,
                                policy=form.policy_fields(),
                                run_at=form.cleaned_data["run_at"],
                                actor=acting_user(request),
                                reason=form.cleaned_data["reason"],
                            )
                        )
                        continue
                    policy = services.policy_set(
                        scope_package=target if isinstance(target, SourcePackage) else None,
                        scope_release=target if isinstance(target, Release) else None,
                        actor=acting_user(request),
                        reason=form.cleaned_data["reason"],
                        **form.policy_fields(),
                    )
                except ValidationError as error:
                    failed.append((target, error))
                else:
                    done.append(policy)
            report_outcome(self, request, "Policy set", done, failed, scheduled)

        return action_with_reason(
            self,
            request,
            queryset,
            action="change_policy",
            title="Change policy",
            explanation="Sets how fast updates phase for each package (or release) of the "
            "selection. A package's policy wins over its release's, which wins over the "
            "global one. The controller uses it from its next tick.",
            form_class=PolicyChangeForm,
            perform=perform,
            targets=[f"package {p.name}" for p in packages]
            + [f"release {r.codename}" for r in releases],
            targets_label="Packages and releases of the selection",
            submit_label="Set policy",
        )


def _publication_line(publication: Publication) -> str:
    return (
        f"{publication.source_package.name} {publication.version} in {publication.release.codename}: "
        f"{publication.phased_update_percentage}%, {publication.get_state_display().lower()}"
    )
