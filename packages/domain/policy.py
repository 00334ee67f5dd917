"""Policy arithmetic: which percentage comes next, and when. Plain Python, no Django.

A policy is either a linear ramp (start, +step every interval, up to the ceiling), as
Ubuntu's phased-updater does with 10/+10/6 h, or an explicit schedule of percentages
(Apple-style 1, 2, 5, 10, 20, 50, 100), one per interval. The "quiet weekend" rule keeps
an update from reaching 100% between Friday 00:00 and Monday 12:00 UTC.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Protocol

FULL = 100
# Bounds of every setting: a policy outside them is refused where it is made (the model,
# the forms, the service), so arithmetic on dates never overflows on a page.
MIN_INTERVAL = timedelta(minutes=1)
MAX_INTERVAL = timedelta(days=30)
MAX_MIN_TIME_AT_PERCENTAGE = timedelta(days=30)
MAX_PREVIOUS_REPORTS = 1_000_000
MAX_SCHEDULE_STEPS = FULL + 1


def _duration_words(delta: timedelta) -> str:
    return f"{delta.days} days" if delta >= timedelta(days=1) else f"{delta.seconds // 60} minute"


# Who decides that an update regressed: errors.ubuntu.com's rules, or the sequential test
# of overview.judges.sequential (both halt on a crash bucket new in the version).
UBUNTU = "ubuntu"
SEQUENTIAL = "sequential"
JUDGE_CHOICES = ((UBUNTU, "Ubuntu's rules"), (SEQUENTIAL, "Sequential test"))
JUDGES = tuple(value for value, _ in JUDGE_CHOICES)
DEFAULT_JUDGE = SEQUENTIAL


@dataclass(frozen=True)
class Rules:
    start: int = 10
    step: int = 10
    interval: timedelta = timedelta(hours=6)
    ceiling: int = FULL
    schedule: tuple[int, ...] = field(default=())
    quiet_weekend: bool = False
    min_time_at_percentage: timedelta | None = None
    min_previous_reports: int = 0
    judge: str = DEFAULT_JUDGE
    # While the evidence is insufficient, hold at this percentage (None: carry on, as
    # Ubuntu's phasing does) until the verdict is healthy or `insufficient_max_hold` passed.
    insufficient_gate: int | None = None
    insufficient_max_hold: timedelta = timedelta(hours=48)
    # A version the error tracker does not know: "hold", or "local" (judge on local data).
    unknown_version: str = "hold"
    # Hold the update together with the updates in phasing it needs (packages.domain.dependencies):
    # never ahead of them, never complete before them.
    phase_with_dependencies: bool = True
    # As Ubuntu's phased-updater: a halted update resumes by itself when the checks come
    # back clean, one step above its last percentage. Off by default: a halt waits for a
    # person.
    auto_resume: bool = False
    # Under the sequential judge, an update at 100% stays in phasing this long before it is
    # complete, its crash rate and its dependents' still judged: an anytime-valid test may
    # look for as long as it likes at no cost in false halts, and a quiet package's
    # regression often shows only once every machine can have it. Ubuntu's rules stop at
    # 100% (their rate rule is not made to be asked again and again). Three days: the
    # backtest looks at 66 hours at 100% (docs/judges.md, "The watch at 100 %").
    watch_at_full: timedelta = timedelta(days=3)

    def __post_init__(self) -> None:
        if self.schedule and sorted(self.schedule) != list(self.schedule):
            raise ValueError("a schedule must rise")
        if len(self.schedule) > MAX_SCHEDULE_STEPS:
            raise ValueError(f"a schedule has at most {MAX_SCHEDULE_STEPS} steps")
        if any(not 0 <= p <= FULL for p in (self.start, self.ceiling, *self.schedule)):
            raise ValueError("percentages are 0..100")
        if self.ceiling < 1:
            raise ValueError("the ceiling is 1..100")
        if not 1 <= self.step <= FULL:
            raise ValueError("the step is 1..100 points")
        if not MIN_INTERVAL <= self.interval <= MAX_INTERVAL:
            raise ValueError(
                f"the interval is between {_duration_words(MIN_INTERVAL)} and "
                f"{_duration_words(MAX_INTERVAL)}"
            )
        if self.min_time_at_percentage is not None and not (
            timedelta(0) <= self.min_time_at_percentage <= MAX_MIN_TIME_AT_PERCENTAGE
        ):
            raise ValueError(
                f"the minimum time at a percentage is at most "
                f"{_duration_words(MAX_MIN_TIME_AT_PERCENTAGE)}"
            )
        if not 0 <= self.min_previous_reports <= MAX_PREVIOUS_REPORTS:
            raise ValueError(f"the previous reports wanted are 0..{MAX_PREVIOUS_REPORTS:,}")
        if self.judge not in JUDGES:
            raise ValueError(f"the judge is one of {', '.join(JUDGES)}")
        if self.insufficient_gate is not None and not 0 <= self.insufficient_gate <= FULL:
            raise ValueError("percentages are 0..100")
        if not timedelta(0) <= self.insufficient_max_hold <= MAX_MIN_TIME_AT_PERCENTAGE:
            raise ValueError(
                f"the longest hold is at most {_duration_words(MAX_MIN_TIME_AT_PERCENTAGE)}"
            )
        if not timedelta(0) <= self.watch_at_full <= MAX_MIN_TIME_AT_PERCENTAGE:
            raise ValueError(
                f"the watch at 100% is at most {_duration_words(MAX_MIN_TIME_AT_PERCENTAGE)}"
            )

    @property
    def watches_at_full(self) -> bool:
        """Whether its judge watches an update at 100% (the sequential one, for
        `watch_at_full`) before it is complete."""
        return self.judge == SEQUENTIAL and self.watch_at_full > timedelta(0)

    def watched_until(self, reached_full_at: datetime) -> datetime | None:
        """When an update that reached 100% at that moment is complete, if watched."""
        return reached_full_at + self.watch_at_full if self.watches_at_full else None

    @property
    def first_percentage(self) -> int:
        return self.schedule[0] if self.schedule else min(self.start, self.ceiling)

    @property
    def top(self) -> int:
        return self.schedule[-1] if self.schedule else self.ceiling


DEFAULT_RULES = Rules()

# (release id, source package id) of a policy's scope: (None, None) is the global one.
Scope = tuple[int | None, int | None]


class Scoped(Protocol):
    release_id: int
    source_package_id: int


def resolve(policies: Mapping[Scope, Rules], *, release_id: int, source_package_id: int) -> Rules:
    """The package's policy, else the release's, else the global one, else the default."""
    for scope in ((None, source_package_id), (release_id, None), (None, None)):
        if scope in policies:
            return policies[scope]
    return DEFAULT_RULES


def resolve_for(policies: Mapping[Scope, Rules], publication: Scoped) -> Rules:
    return resolve(
        policies, release_id=publication.release_id, source_package_id=publication.source_package_id
    )


def next_percentage(rules: Rules, current: int) -> int | None:
    """The percentage one step above `current`, or None when there is no step left."""
    if rules.schedule:
        for value in rules.schedule:
            if value > current:
                return value
        return None
    if current >= rules.ceiling:
        return None
    if current < rules.start:
        return min(rules.start, rules.ceiling)
    return min(current + rules.step, rules.ceiling)


def next_step_at(rules: Rules, *, percentage: int, last_increase_at: datetime) -> datetime | None:
    if next_percentage(rules, percentage) is None:
        return None
    return last_increase_at + rules.interval


def in_quiet_weekend(moment: datetime) -> bool:
    """Friday 00:00 to Monday 12:00 UTC, when no update may reach 100%."""
    moment = moment.astimezone(UTC)
    weekday = moment.weekday()  # Monday is 0
    return weekday in (4, 5, 6) or (weekday == 0 and moment.hour < 12)


def end_of_quiet_weekend(moment: datetime) -> datetime:
    moment = moment.astimezone(UTC)
    days_to_monday = (7 - moment.weekday()) % 7
    monday = (moment + timedelta(days=days_to_monday)).replace(
        hour=12, minute=0, second=0, microsecond=0
    )
    return monday if monday > moment else monday + timedelta(days=7)


def step_allowed_at(rules: Rules, *, target: int, moment: datetime) -> datetime:
    """The earliest moment at or after `moment` when a step to `target` may happen."""
    if rules.quiet_weekend and target >= FULL and in_quiet_weekend(moment):
        return end_of_quiet_weekend(moment)
    return moment


def projected_steps(
    rules: Rules, *, percentage: int, last_increase_at: datetime, now: datetime
) -> list[tuple[datetime, int]]:
    """(when, percentage) of every remaining step, if nothing holds the update.

    The controller steps at most once per tick, so a step that is already due is
    projected at `now`, and the steps after it follow one interval apart.
    """
    steps: list[tuple[datetime, int]] = []
    current = percentage
    at = last_increase_at
    while (following := next_percentage(rules, current)) is not None:
        at = step_allowed_at(rules, target=following, moment=max(at + rules.interval, now))
        steps.append((at, following))
        current = following
    return steps


def time_to_reach(
    rules: Rules, *, percentage: int, last_increase_at: datetime, now: datetime, target: int
) -> datetime | None:
    """When the percentage first reaches `target` (None if the policy never gets there)."""
    if percentage >= target:
        return now
    for at, value in projected_steps(
        rules, percentage=percentage, last_increase_at=last_increase_at, now=now
    ):
        if value >= target:
            return at
    return None
