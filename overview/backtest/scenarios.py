"""The backtest's scenario files: updates with known truth, in a fixed format.

Plain Python, no Django. Anyone may write scenarios (triagers tuning thresholds, the
release team, other test suites), so every field is checked and an unknown key, a
negative rate or a malformed date is an error that names the key and the update.

    {"start": "2026-01-05T00:00:00Z", "hours": 120,
     "policy": {...optional, for every update...},
     "updates": [{"id": "u1", "release": "noble", "source_package": "foo",
       "version": "1.2-1ubuntu0.2", "previous_version": "1.2-1ubuntu0.1",
       "machines": 200000, "uptake_hours": 12,
       "previous_crashes_per_machine_day": 0.0005,
       "new_crashes_per_machine_day": 0.0005,
       "new_buckets": [{"signature": "foo:crash_in_bar", "crashes_per_machine_day": 0.00002}],
       "policy": {...optional...}}]}

An update may also say how its dependents (other packages whose crash reports list it)
crash: ``"dependents": {"crashes_per_machine_day": 0.005, "ratio": 3,
"own_update": {"version": "1.0-2", "ratio": 5}}`` (every key optional). ``ratio`` is their
crash rate on machines with the new version ÷ with the previous one: above 1, a
regression that shows only in the dependents' crashes. ``own_update`` is a dependent's
own new version, published with this one and installed on the same machines, whose own
crash rate is ``ratio`` × its previous version's: this update is not to blame for it.

An optional ``"world": {...}`` sets the simulated world's factors (daily and weekly
cycles, overdispersion, late reports, uptake by timers, phasing-ignorers, shocks: see
overview.backtest.realism and docs/backtest.md) over the world chosen by ``--world``.

A policy (all keys optional): start_percentage, step, interval_hours, ceiling, schedule,
quiet_weekend, insufficient_gate, insufficient_max_hold_hours. Without one, the
configured default policy applies. The judge is the backtest's choice, not the scenario's.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from debian.debian_support import Version

from overview.backtest import realism
from overview.backtest.scenario_fields import (
    ScenarioError,
    _mapping,
    _moment,
    _number,
    _text,
    _version,
)

# Debian policy 5.6.1: lower case letters, digits, plus, minus and dots, two or more long,
# starting with an alphanumeric.
SOURCE_NAME = re.compile(r"\A[a-z0-9][a-z0-9+.-]+\Z")
RELEASE_NAME = re.compile(r"\A[a-z][a-z0-9-]{0,39}\Z")
MAX_HOURS = 24 * 60
MAX_MACHINES = 100_000_000
# The version every simulated dependent runs before any own update of its own.
DEPENDENT_VERSION = "1.0-1"


@dataclass(frozen=True)
class NewBucket:
    signature: str
    crashes_per_machine_day: float


@dataclass(frozen=True)
class OwnUpdate:
    """A dependent's own new version, out with the update on the same machines."""

    version: str
    ratio: float


@dataclass(frozen=True)
class Dependents:
    """How the update's dependents crash: per machine-day (None: as much as the world's
    model of the package gives), and their rate with the new version ÷ with the old."""

    crashes_per_machine_day: float | None = None
    ratio: float = 1.0
    own_update: OwnUpdate | None = None


@dataclass(frozen=True)
class PolicySpec:
    start_percentage: int | None = None
    step: int | None = None
    interval_hours: float | None = None
    ceiling: int | None = None
    schedule: tuple[int, ...] | None = None
    quiet_weekend: bool | None = None
    insufficient_gate: int | None = None
    insufficient_max_hold_hours: float | None = None

    def merged(self, other: PolicySpec | None) -> PolicySpec:
        """This policy with the keys `other` sets taking precedence."""
        if other is None:
            return self
        values = {
            name: getattr(other, name) if getattr(other, name) is not None else getattr(self, name)
            for name in self.__dataclass_fields__
        }
        return PolicySpec(**values)


@dataclass(frozen=True)
class Update:
    id: str
    release: str
    source_package: str
    version: str
    previous_version: str
    machines: int
    uptake_hours: float
    previous_crashes_per_machine_day: float
    new_crashes_per_machine_day: float
    new_buckets: tuple[NewBucket, ...] = ()
    policy: PolicySpec | None = None
    dependents: Dependents | None = None

    @property
    def previous_crashes_per_day(self) -> float:
        return self.machines * self.previous_crashes_per_machine_day

    @property
    def rate_ratio(self) -> float:
        if self.previous_crashes_per_machine_day == 0:
            return math.inf if self.new_crashes_per_machine_day > 0 else 1.0
        return self.new_crashes_per_machine_day / self.previous_crashes_per_machine_day

    @property
    def dependents_ratio(self) -> float:
        return self.dependents.ratio if self.dependents is not None else 1.0

    @property
    def regressed(self) -> bool:
        """The truth: a higher crash rate, a crash bucket the previous version never had, or
        dependents that crash more with it (a dependent's own new version is not its fault)."""
        return (
            self.rate_ratio > 1
            or any(b.crashes_per_machine_day > 0 for b in self.new_buckets)
            or self.dependents_ratio > 1
        )


@dataclass(frozen=True)
class Scenario:
    start: datetime
    hours: int
    updates: tuple[Update, ...]
    policy: PolicySpec = field(default_factory=PolicySpec)
    # The file's "world" keys: they take precedence over the world chosen by name.
    world: Mapping[str, Any] = field(default_factory=dict)

    def world_spec(self, name: str = "tidy") -> realism.WorldSpec:
        return realism.with_overrides(realism.named(name), self.world)


_TOP = {"start", "hours", "updates", "policy", "world"}
_UPDATE = {
    "id",
    "release",
    "source_package",
    "version",
    "previous_version",
    "machines",
    "uptake_hours",
    "previous_crashes_per_machine_day",
    "new_crashes_per_machine_day",
    "new_buckets",
    "policy",
    "dependents",
}
_UPDATE_OPTIONAL = {"new_buckets", "policy", "dependents"}
_BUCKET = {"signature", "crashes_per_machine_day"}
_DEPENDENTS = {"crashes_per_machine_day", "ratio", "own_update"}
_OWN_UPDATE = {"version", "ratio"}
_POLICY = set(PolicySpec.__dataclass_fields__)


def load(path: str) -> Scenario:
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except OSError as error:
        raise ScenarioError(f"cannot read {path}: {error.strerror or error}") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise ScenarioError(f"{path} is not JSON: {error}") from error
    return parse(data)


def parse(data: Any) -> Scenario:
    where = "the scenario"
    top = _mapping(data, where, _TOP, required=("start", "hours", "updates"))
    start = _moment(top["start"], f"{where}'s start")
    hours = _number(top["hours"], f"{where}'s hours", integer=True, low=1, high=MAX_HOURS)
    updates_raw = top["updates"]
    if not isinstance(updates_raw, list) or not updates_raw:
        raise ScenarioError("updates must be a non-empty list")
    updates = tuple(_update(raw, n) for n, raw in enumerate(updates_raw, start=1))
    seen: set[str] = set()
    for update in updates:
        if update.id in seen:
            raise ScenarioError(f"update id {update.id!r} is used twice")
        seen.add(update.id)
    policy = _policy(top["policy"], f"{where}'s policy") if "policy" in top else PolicySpec()
    try:
        world = realism.overrides(top.get("world", {}))
    except realism.WorldSpecError as error:
        raise ScenarioError(str(error)) from error
    return Scenario(start=start, hours=int(hours), updates=updates, policy=policy, world=world)


def _update(raw: Any, n: int) -> Update:
    where = f"update {n}"
    if isinstance(raw, Mapping) and isinstance(raw.get("id"), str):
        where = f"update {raw['id']!r}"
    fields = _mapping(raw, where, _UPDATE, required=tuple(sorted(_UPDATE - _UPDATE_OPTIONAL)))
    update_id = fields["id"]
    if not isinstance(update_id, str) or not update_id.strip() or len(update_id) > 100:
        raise ScenarioError(f"{where}: id must be a non-empty string of at most 100 characters")
    release = _text(fields["release"], f"{where}: release", RELEASE_NAME)
    source = _text(fields["source_package"], f"{where}: source_package", SOURCE_NAME)
    version = _version(fields["version"], f"{where}: version")
    previous = _version(fields["previous_version"], f"{where}: previous_version")
    if Version(previous) >= Version(version):
        raise ScenarioError(f"{where}: previous_version must be lower than version")
    buckets_raw = fields.get("new_buckets", [])
    if not isinstance(buckets_raw, list):
        raise ScenarioError(f"{where}: new_buckets must be a list")
    buckets = []
    for b, bucket in enumerate(buckets_raw, start=1):
        bucket_where = f"{where}, new bucket {b}"
        values = _mapping(bucket, bucket_where, _BUCKET, required=tuple(sorted(_BUCKET)))
        signature = values["signature"]
        if not isinstance(signature, str) or not signature.strip() or len(signature) > 900:
            raise ScenarioError(f"{bucket_where}: signature must be a non-empty string")
        rate = _number(
            values["crashes_per_machine_day"], f"{bucket_where}: crashes_per_machine_day", low=0
        )
        buckets.append(NewBucket(signature, float(rate)))
    return Update(
        id=update_id,
        release=release,
        source_package=source,
        version=version,
        previous_version=previous,
        machines=int(
            _number(
                fields["machines"], f"{where}: machines", integer=True, low=1, high=MAX_MACHINES
            )
        ),
        uptake_hours=float(
            _number(fields["uptake_hours"], f"{where}: uptake_hours", low=0, low_open=True)
        ),
        previous_crashes_per_machine_day=float(
            _number(
                fields["previous_crashes_per_machine_day"],
                f"{where}: previous_crashes_per_machine_day",
                low=0,
                high=100,
            )
        ),
        new_crashes_per_machine_day=float(
            _number(
                fields["new_crashes_per_machine_day"],
                f"{where}: new_crashes_per_machine_day",
                low=0,
                high=100,
            )
        ),
        new_buckets=tuple(buckets),
        policy=_policy(fields["policy"], f"{where}: policy") if "policy" in fields else None,
        dependents=(
            _dependents(fields["dependents"], f"{where}: dependents")
            if "dependents" in fields
            else None
        ),
    )


def _dependents(raw: Any, where: str) -> Dependents:
    values = _mapping(raw, where, _DEPENDENTS, required=())
    rate = None
    if "crashes_per_machine_day" in values:
        rate = float(
            _number(
                values["crashes_per_machine_day"],
                f"{where}: crashes_per_machine_day",
                low=0,
                high=100,
            )
        )
    ratio = float(_number(values.get("ratio", 1.0), f"{where}: ratio", low=0, high=1000))
    own = None
    if "own_update" in values:
        own_where = f"{where}: own_update"
        own_values = _mapping(values["own_update"], own_where, _OWN_UPDATE, required=("version",))
        version = _version(own_values["version"], f"{own_where}: version")
        if Version(version) <= Version(DEPENDENT_VERSION):
            raise ScenarioError(f"{own_where}: version must be above {DEPENDENT_VERSION}")
        own = OwnUpdate(
            version=version,
            ratio=float(
                _number(own_values.get("ratio", 1.0), f"{own_where}: ratio", low=0, high=1000)
            ),
        )
    return Dependents(crashes_per_machine_day=rate, ratio=ratio, own_update=own)


def _policy(raw: Any, where: str) -> PolicySpec:
    values = _mapping(raw, where, _POLICY, required=())
    spec: dict[str, Any] = {}
    for name in ("start_percentage", "ceiling", "insufficient_gate"):
        if name in values and values[name] is not None:
            spec[name] = int(
                _number(values[name], f"{where}: {name}", integer=True, low=0, high=100)
            )
    if "step" in values:
        spec["step"] = int(_number(values["step"], f"{where}: step", integer=True, low=1, high=100))
    for name in ("interval_hours", "insufficient_max_hold_hours"):
        if name in values:
            spec[name] = float(
                _number(
                    values[name],
                    f"{where}: {name}",
                    low=0,
                    low_open=name == "interval_hours",
                    high=MAX_HOURS,
                )
            )
    if "quiet_weekend" in values:
        if not isinstance(values["quiet_weekend"], bool):
            raise ScenarioError(f"{where}: quiet_weekend must be true or false")
        spec["quiet_weekend"] = values["quiet_weekend"]
    if "schedule" in values:
        schedule = values["schedule"]
        if (
            not isinstance(schedule, list)
            or not all(
                isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= 100 for p in schedule
            )
            or schedule != sorted(schedule)
        ):
            raise ScenarioError(f"{where}: schedule must be rising percentages 0..100")
        spec["schedule"] = tuple(schedule)
    return PolicySpec(**spec)
