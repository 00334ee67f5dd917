"""What makes a backtest world realistic: its factors, their defaults and the named worlds.

Plain Python, no Django, no import of the rest of the backtest (the scenario file parses
its ``"world"`` object here). Every factor defaults to the tidy world the backtest began
with: constant rates, Poisson counts, exponential uptake, every machine obeying phasing,
reports arriving at once. docs/backtest.md says what each one does to the counts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

import numpy as np

UPTAKES = ("exponential", "timers")


class WorldSpecError(ValueError):
    """A world that cannot be simulated, with the key named."""


@dataclass(frozen=True)
class Shock:
    """Every version's crash rate (and the dependents') times `factor` for `hours` hours
    from hour `start_hour` of the scenario: a bad kernel, a broken library elsewhere."""

    start_hour: int
    hours: int
    factor: float


@dataclass(frozen=True)
class WorldSpec:
    # Busiest hour against quietest hour of the day (1: no daily cycle; 4: 4:1).
    daily_ratio: float = 1.0
    # The UTC hour of the day's peak of use and crashes.
    daily_peak_hour: int = 15
    # Saturday's and Sunday's use against a weekday's (1: no weekly cycle).
    weekend_factor: float = 1.0
    # Shape k of the gamma mixing each hour's expected count (0: plain Poisson). Counts
    # are then negative binomial: variance = mean + mean²/k.
    overdispersion_shape: float = 0.0
    # Share of crashes that come from a machine in a crash loop, and how many reports
    # such a machine sends in the hour (the same machine, bucket and hour).
    looping_share: float = 0.0
    looping_reports: int = 10
    # Share of reports that arrive late, and their mean delay in hours (exponential). A
    # late report is booked at its crash time, so past hours' and days' counts still grow.
    late_share: float = 0.0
    late_mean_hours: float = 12.0
    # "exponential" (update runs at random, mean uptake_hours) or "timers": a machine
    # installs at its next daily timer run; a share of machines is off for up to
    # `off_days` days and installs when it comes back.
    uptake: str = "exponential"
    off_share: float = 0.0
    off_days: float = 4.0
    # Share of machines that ignore phasing and install at once, whatever the percentage.
    ignorers: float = 0.0
    shocks: tuple[Shock, ...] = field(default_factory=tuple)
    # Machines an hour, per update, whose fleet agent reports whether it runs the new
    # version (overview.evidence.fleet): the uptake measured, not inferred (0: no agents).
    fleet_agents_per_hour: int = 0

    def activity(self, moment: datetime) -> float:
        """How busy the fleet is at `moment` (mean 1 over a week): the daily cycle, a
        cosine peaking at daily_peak_hour, times the weekend factor, normalised."""
        return self.hour_of_day_factor(moment) * self.day_factor(moment)

    def hour_of_day_factor(self, moment: datetime) -> float:
        if self.daily_ratio == 1:
            return 1.0
        amplitude = (self.daily_ratio - 1) / (self.daily_ratio + 1)
        hour = moment.hour + moment.minute / 60
        return 1 + amplitude * math.cos(2 * math.pi * (hour - self.daily_peak_hour) / 24)

    def day_factor(self, moment: datetime) -> float:
        if self.weekend_factor == 1:
            return 1.0
        level = self.weekend_factor if moment.weekday() >= 5 else 1.0
        return level * 7 / (5 + 2 * self.weekend_factor)

    def shock(self, hour: int) -> float:
        factor = 1.0
        for shock in self.shocks:
            if shock.start_hour <= hour < shock.start_hour + shock.hours:
                factor *= shock.factor
        return factor

    def installed(self, eligible_hours: Any, uptake_hours: float) -> Any:
        """The share of machines with a draw that has been eligible this long that have
        installed (NumPy arrays or floats), ignorers left aside."""
        hours = np.asarray(eligible_hours, dtype=float)
        if self.uptake == "exponential":
            return 1 - np.exp(-hours / uptake_hours)
        on = np.minimum(1.0, hours / 24)
        off = np.minimum(1.0, hours / (24 * self.off_days))
        return (1 - self.off_share) * on + self.off_share * off

    def delay(self, uniform: float, off: bool, uptake_hours: float) -> float:
        """Hours of eligibility a machine needs before it installs, from a uniform draw."""
        if self.uptake == "exponential":
            return -uptake_hours * math.log(uniform)
        return uniform * 24 * (self.off_days if off else 1)


TIDY = WorldSpec()
REALISTIC = WorldSpec(
    daily_ratio=3.0,
    weekend_factor=0.7,
    overdispersion_shape=4.0,
    looping_share=0.01,
    looping_reports=10,
    late_share=0.3,
    late_mean_hours=10.0,
    uptake="timers",
    off_share=0.15,
    off_days=4.0,
    ignorers=0.03,
    shocks=(Shock(start_hour=40, hours=12, factor=3.0),),
)
WORLDS: dict[str, WorldSpec] = {"tidy": TIDY, "realistic": REALISTIC}


def register(name: str, spec: WorldSpec) -> None:
    """Name a world for ``phasing_backtest --world NAME``."""
    WORLDS[name] = spec


def named(name: str) -> WorldSpec:
    try:
        return WORLDS[name]
    except KeyError:
        raise WorldSpecError(f"unknown world {name!r}: use {', '.join(sorted(WORLDS))}") from None


_NUMBERS = {
    # name: (low, high, whole)
    "daily_ratio": (1.0, 100.0, False),
    "daily_peak_hour": (0, 23, True),
    "weekend_factor": (0.01, 10.0, False),
    "overdispersion_shape": (0.0, 1e6, False),
    "looping_share": (0.0, 1.0, False),
    "looping_reports": (1, 1000, True),
    "late_share": (0.0, 1.0, False),
    "late_mean_hours": (0.01, 24 * 30, False),
    "off_share": (0.0, 1.0, False),
    "off_days": (1.0, 60.0, False),
    "ignorers": (0.0, 1.0, False),
    "fleet_agents_per_hour": (0, 100_000, True),
}


def overrides(raw: Any) -> dict[str, Any]:
    """The scenario file's ``"world"`` object, checked: field name → value."""
    if not isinstance(raw, Mapping):
        raise WorldSpecError("world must be an object")
    known = {f.name for f in fields(WorldSpec)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise WorldSpecError(f"world: unknown key {unknown[0]!r}")
    values: dict[str, Any] = {}
    for name, value in raw.items():
        where = f"world: {name}"
        if name in _NUMBERS:
            low, high, whole = _NUMBERS[name]
            values[name] = _number(value, where, low, high, whole)
        elif name == "uptake":
            if value not in UPTAKES:
                raise WorldSpecError(f"{where} must be one of {', '.join(UPTAKES)}")
            values[name] = value
        elif name == "shocks":
            if not isinstance(value, list):
                raise WorldSpecError(f"{where} must be a list")
            values[name] = tuple(_shock(s, f"world: shock {n}") for n, s in enumerate(value, 1))
    return values


def with_overrides(spec: WorldSpec, values: Mapping[str, Any]) -> WorldSpec:
    return replace(spec, **values)


def _shock(raw: Any, where: str) -> Shock:
    if not isinstance(raw, Mapping) or set(raw) != {"start_hour", "hours", "factor"}:
        raise WorldSpecError(f"{where} must be an object with start_hour, hours and factor")
    return Shock(
        start_hour=int(_number(raw["start_hour"], f"{where}: start_hour", 0, 24 * 60, True)),
        hours=int(_number(raw["hours"], f"{where}: hours", 1, 24 * 60, True)),
        factor=float(_number(raw["factor"], f"{where}: factor", 0.0, 1000.0, False)),
    )


def _number(value: Any, where: str, low: float, high: float, whole: bool) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise WorldSpecError(f"{where} must be a number")
    if whole and value != int(value):
        raise WorldSpecError(f"{where} must be a whole number")
    if not low <= value <= high:
        raise WorldSpecError(f"{where} must be between {low:g} and {high:g}")
    return int(value) if whole else float(value)
