"""What a backtest measured, per judge: what it caught, how late, what it halted for nothing.

Plain Python, no Django. The truth of each update comes from its scenario: a regression
is a higher crash rate, a new crash bucket, or dependents that crash more with it (a
library's regression that shows only in its dependents' crashes); a healthy update has
none of these (a dependent's own new version crashing more is not its regression).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from overview.backtest.runner import Outcome
from overview.backtest.scenarios import Scenario, Update

SIZE_BINS = (
    (1.0, 1.5, "rate 1.2–1.5×"),
    (1.5, 2.0, "rate 1.5–2×"),
    (2.0, 5.0, "rate 2–5×"),
    (5.0, float("inf"), "rate 5× or more"),
)
# The yardstick: regressions of 2× or more in packages with 100 crashes a day or more.
LARGE_RATIO, BUSY_CRASHES_PER_DAY = 2.0, 100.0


@dataclass(frozen=True)
class JudgeSummary:
    judge: str
    healthy: int
    healthy_halted: int
    insufficient: int
    healthy_hours_to_100: float | None
    caught: dict[str, tuple[int, int]]  # kind and size → (caught before 100 %, of)
    large_busy_caught: tuple[int, int]  # before 100 %
    new_bucket_caught: frozenset[str]  # new-bucket regressions halted, by whatever rule
    new_bucket_rule_caught: frozenset[str]  # ... halted by the new-bucket rule
    machine_hours_before_halt: dict[str, float]  # id → machine-hours before its halt
    median_machine_hours_before_halt: float | None
    machine_hours_on_bad_versions: float
    # Clear regressions (2× or more at 100+ crashes a day) halted: the percentage and the
    # hours since publication at the halt, medians.
    large_busy_median_percentage: float | None = None
    large_busy_median_hours: float | None = None
    # Per regression size (ratio, halted before 100 %), for the plot.
    by_ratio: tuple[tuple[float, bool], ...] = ()
    # Halts by the kind of problem that made them (new-bucket, increased-rate, dependents),
    # healthy updates' included.
    halts_by_problem: tuple[tuple[str, int], ...] = ()
    # Healthy libraries whose dependent had its own new version crashing more: halted for
    # their dependents' crashes (blamed), of how many.
    own_version_blamed: tuple[int, int] = (0, 0)
    # Regressions halted only at 100 %, while the sequential judge still watched them
    # there (Rules.watch_at_full).
    caught_at_full: int = 0

    @property
    def healthy_halt_rate(self) -> float:
        return self.healthy_halted / self.healthy if self.healthy else 0.0


DEPENDENTS_ONLY = "dependents only"


def _before_full(outcome: Outcome) -> bool:
    """Halted before it reached 100 % (not while watched there)."""
    return outcome.halted and (outcome.percentage_at_halt or 0) < 100


def _kind(update: Update) -> str:
    if any(b.crashes_per_machine_day > 0 for b in update.new_buckets):
        return "new bucket"
    if update.rate_ratio <= 1 and update.dependents_ratio > 1:
        return DEPENDENTS_ONLY
    ratio = update.rate_ratio
    for low, high, label in SIZE_BINS:
        if low <= ratio < high:
            return label
    return "rate 1.2–1.5×"


def summarise(scenario: Scenario, outcomes: Sequence[Outcome], judge: str) -> JudgeSummary:
    truth = {u.id: u for u in scenario.updates}
    mine = [o for o in outcomes if o.judge == judge]
    healthy = [o for o in mine if not truth[o.id].regressed]
    bad = [o for o in mine if truth[o.id].regressed]
    caught: dict[str, tuple[int, int]] = {}
    for outcome in bad:
        kind = _kind(truth[outcome.id])
        got, of = caught.get(kind, (0, 0))
        caught[kind] = (got + _before_full(outcome), of + 1)
    large = [
        o
        for o in bad
        if truth[o.id].rate_ratio >= LARGE_RATIO
        and truth[o.id].previous_crashes_per_day >= BUSY_CRASHES_PER_DAY
    ]
    before_halt = [
        o.machine_hours_before_halt for o in bad if o.machine_hours_before_halt is not None
    ]
    to_full = [o.hours_to_100 for o in healthy if o.hours_to_100 is not None]
    innocent = [o for o in healthy if _own_update(truth[o.id])]
    large_halts = [o for o in large if _before_full(o)]
    return JudgeSummary(
        judge=judge,
        healthy=len(healthy),
        healthy_halted=sum(o.halted for o in healthy),
        insufficient=sum(o.verdict == "insufficient" for o in mine),
        healthy_hours_to_100=statistics.median(to_full) if to_full else None,
        caught=dict(sorted(caught.items())),
        large_busy_caught=(sum(map(_before_full, large)), len(large)),
        caught_at_full=sum(o.halted and not _before_full(o) for o in bad),
        new_bucket_caught=frozenset(
            o.id for o in bad if _before_full(o) and _kind(truth[o.id]) == "new bucket"
        ),
        new_bucket_rule_caught=frozenset(
            o.id
            for o in bad
            if o.halt_reason == "new-bucket" and _kind(truth[o.id]) == "new bucket"
        ),
        machine_hours_before_halt={
            o.id: o.machine_hours_before_halt
            for o in bad
            if o.machine_hours_before_halt is not None
        },
        median_machine_hours_before_halt=statistics.median(before_halt) if before_halt else None,
        machine_hours_on_bad_versions=sum(
            (o.machine_hours_before_halt or 0.0) if o.halted else o.machine_hours_on_new_version
            for o in bad
        ),
        large_busy_median_percentage=_median([o.percentage_at_halt for o in large_halts]),
        large_busy_median_hours=_median([o.halted_at_hour for o in large_halts]),
        by_ratio=tuple(
            (truth[o.id].rate_ratio, _before_full(o))
            for o in bad
            if _kind(truth[o.id]) not in ("new bucket", DEPENDENTS_ONLY)
        ),
        halts_by_problem=tuple(
            sorted(Counter(o.halt_reason for o in mine if o.halt_reason).items())
        ),
        own_version_blamed=(
            sum(o.halt_reason == "dependents" for o in innocent),
            len(innocent),
        ),
    )


def _own_update(update: Update) -> bool:
    return update.dependents is not None and update.dependents.own_update is not None


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def table(summaries: Sequence[JudgeSummary]) -> str:
    """The figures side by side, one column per judge."""
    rows: list[tuple[str, ...]] = [("", *(s.judge for s in summaries))]

    def add(label: str, values: Sequence[str]) -> None:
        rows.append((label, *values))

    add(
        "healthy updates halted",
        [
            f"{s.healthy_halted} of {s.healthy} ({100 * s.healthy_halt_rate:.1f}%)"
            for s in summaries
        ],
    )
    kinds = sorted({k for s in summaries for k in s.caught})
    for kind in kinds:
        add(
            f"caught before 100%: {kind}",
            [_fraction(*s.caught.get(kind, (0, 0))) for s in summaries],
        )
    add(
        "caught at 100%, while still judged there",
        [str(s.caught_at_full) for s in summaries],
    )
    add(
        "caught before 100%: 2× or more at 100+ crashes/day",
        [_fraction(*s.large_busy_caught) for s in summaries],
    )
    add(
        "clear regressions: median % at halt",
        [_number(s.large_busy_median_percentage) for s in summaries],
    )
    add(
        "clear regressions: median hours to halt",
        [_number(s.large_busy_median_hours) for s in summaries],
    )
    add(
        "median machine-hours on a bad version before its halt",
        [_number(s.median_machine_hours_before_halt) for s in summaries],
    )
    add(
        "machine-hours on bad versions, all",
        [_number(s.machine_hours_on_bad_versions) for s in summaries],
    )
    for problem in sorted({k for s in summaries for k, _ in s.halts_by_problem}):
        add(
            f"halts by problem: {problem.replace('-', ' ')}",
            [str(dict(s.halts_by_problem).get(problem, 0)) for s in summaries],
        )
    if any(s.own_version_blamed[1] for s in summaries):
        add(
            "library blamed for a dependent's own new version",
            [_fraction(*s.own_version_blamed) for s in summaries],
        )
    add("left with insufficient evidence", [str(s.insufficient) for s in summaries])
    add("median hours to 100% (healthy)", [_number(s.healthy_hours_to_100) for s in summaries])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _fraction(got: int, of: int) -> str:
    return f"{got} of {of}" + (f" ({100 * got / of:.0f}%)" if of else "")


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def checks(sequential: JudgeSummary, ubuntu: JudgeSummary) -> list[tuple[str, bool]]:
    """The bar the sequential judge must clear on the project's own scenario set."""
    got, of = sequential.large_busy_caught
    return [
        ("sequential halts at most 1% of healthy updates", sequential.healthy_halt_rate <= 0.01),
        (
            "sequential halts fewer healthy updates than Ubuntu's rules",
            sequential.healthy_halted < ubuntu.healthy_halted or ubuntu.healthy_halted == 0,
        ),
        (
            "sequential catches 95% of 2× regressions at 100+ crashes/day before 100%",
            of == 0 or got >= 0.95 * of,
        ),
        (
            "sequential halts clear regressions at a median of 30% or less",
            (sequential.large_busy_median_percentage or 0) <= 30,
        ),
        (
            "sequential allows at most 0.8× Ubuntu's machine-hours on bad versions",
            sequential.machine_hours_on_bad_versions <= 0.8 * ubuntu.machine_hours_on_bad_versions,
        ),
        (
            "sequential misses no new-bucket regression Ubuntu's new-bucket rule catches",
            ubuntu.new_bucket_rule_caught <= sequential.new_bucket_caught,
        ),
        (
            "... with no more machine-hours on them before the halt",
            sum(
                sequential.machine_hours_before_halt.get(i, 0.0)
                for i in ubuntu.new_bucket_rule_caught
            )
            <= sum(ubuntu.machine_hours_before_halt[i] for i in ubuntu.new_bucket_rule_caught),
        ),
        (
            "(stricter) sequential misses no new-bucket regression Ubuntu halts by any rule",
            ubuntu.new_bucket_caught <= sequential.new_bucket_caught,
        ),
    ]
