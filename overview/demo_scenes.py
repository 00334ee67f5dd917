"""The moments of the demo a newcomer should meet, set up by seed_demo around its replay of
the simulated week: one update held for data, one release frozen for a point release, one
release to 100% waiting for a second archive admin's sign-off. Each through the services
people use, chosen from the simulated world by fixed rules, so a seed gives one demo."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.test.utils import override_settings

from packages.holds import HoldReason
from packages.models import (
    PhasingState,
    Policy,
    Publication,
    Release,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
    SourcePackage,
)
from packages.services import policy_set, release_freeze
from packages.services.scheduled import scheduled_change_create
from packages.sources.simulated_world import TOGETHER
from packages.sources.simulator import Simulator

# The release whose -updates are frozen while its point release is built, and since when.
FROZEN_RELEASE = "noble"
FROZEN_FOR = timedelta(hours=5)
FREEZE_REASON = "24.04.4 point release: -updates frozen while the images are built and tested."
# More reports of the previous version than a rarely crashing package ever has.
PREVIOUS_REPORTS_WANTED = 5000
HOLD_REASON = (
    "Too few crash reports of the previous version to tell a regression: hold each update "
    f"until there are {PREVIOUS_REPORTS_WANTED:,}."
)
SIGN_OFF_REASON = (
    "Fixes the crash on resume that many users report (LP: #2101234); release to everyone now."
)
_GROUPED = {name for t in TOGETHER for name in (t.needed, t.dependent)}


@dataclass
class Scenes:
    held_package: str | None
    freeze_at: datetime
    now: datetime
    frozen: bool = False

    @classmethod
    def plan(cls, simulator: Simulator, *, start: datetime, now: datetime) -> Scenes:
        """The package held for data: of the healthy updates published 10 to 40 hours before
        the end (in phasing at its end, and due a step), the one of the package that crashes
        least, outside the frozen release and the dependency groups."""
        healthy = [
            upload
            for upload in simulator.uploads(until=now)
            if upload.regression is None
            and now - timedelta(hours=40) <= upload.published <= now - timedelta(hours=10)
            and upload.release != FROZEN_RELEASE
            and upload.package not in _GROUPED
        ]
        quietest = min(healthy, key=lambda u: (u.popularity, u.package), default=None)
        return cls(
            held_package=quietest.package if quietest else None,
            freeze_at=max(start, now - FROZEN_FOR),
            now=now,
        )

    def before_replay(self, admin: User) -> None:
        if self.held_package is None:
            return
        package, _ = SourcePackage.objects.get_or_create(name=self.held_package)
        if Policy.objects.filter(source_package=package).exists():
            return  # a replay that goes on set it already
        policy_set(
            scope_package=package,
            actor=admin,
            reason=HOLD_REASON,
            min_previous_reports=PREVIOUS_REPORTS_WANTED,
        )

    def during_replay(self, admin: User, moment: datetime) -> None:
        if self.frozen or moment < self.freeze_at:
            return
        release = Release.objects.filter(codename=FROZEN_RELEASE).first()
        if release is not None and not release.frozen:
            release_freeze(release=release, actor=admin, reason=FREEZE_REASON, now=moment)
        self.frozen = True

    def after_replay(self, admin: User) -> ScheduledChange | None:
        """An archive admin asks to release the most advanced update still rising; with
        sign-off on (as in the demo) it waits for a second archive admin."""
        if ScheduledChange.objects.filter(
            action=ScheduledAction.RELEASE, state=ScheduledState.PENDING
        ).exists():
            return None  # a replay that goes on asked already
        candidate = (
            Publication.objects.filter(
                state=PhasingState.PHASING,
                hold_reason__in=(HoldReason.NONE, HoldReason.WAITING),
                phased_update_percentage__gte=30,
            )
            .exclude(release__codename=FROZEN_RELEASE)
            .exclude(source_package__name__in=_GROUPED | {self.held_package or ""})
            .order_by("-phased_update_percentage", "source_package__name", "id")
            .first()
        )
        if candidate is None:
            return None
        with override_settings(PHASING_SIGN_OFF_REQUIRED=True):
            return scheduled_change_create(
                action=ScheduledAction.RELEASE,
                publication=candidate,
                actor=admin,
                reason=SIGN_OFF_REASON,
                now=self.now,
            )
