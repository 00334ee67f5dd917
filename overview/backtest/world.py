"""The truth of one scenario update: machines, their phase, their installs and crashes.

Plain Python (and NumPy), no Django. A machine takes the update when apt's draw for it
(packages.domain.apt_phasing, the product's exact draw) is at most the percentage, after an
exponential delay whose mean is the update's uptake_hours (modelled as update runs at
random: a machine installs at its first run while eligible, so a halt stops it for good
unless its draw is 0). From then on it crashes at the new version's rates, before at the
previous version's. Crashes are Poisson per machine-hour; each report names the machine
it came from, so distinct-system counts are real.

Machines are only made concrete when one of them crashes: the number of crashes an hour
is drawn from the total intensity of the machines in each group (on the new version, on
the old), then the crashing machine is drawn from that group by rejection, using its own
draw and install delay. A machine id, its draw and its delay never change.

Other packages' crashes carry this package's version too (apport lists the versions of
the packages a crashing one depends on): machines report crashes of packages that depend
on this one at a rate that depends on how many do (a property of the package, fixed by its
name), which is how the judge measures uptake. The judge never reads the truth here.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from overview.backtest.realism import TIDY, WorldSpec
from overview.backtest.scenarios import DEPENDENT_VERSION, Update
from overview.evidence.sources.base import CrashReportRecord
from packages.domain import apt_phasing

HOUR = timedelta(hours=1)
# Crashes of packages that depend on this one, per machine-day, for the most depended-on
# package (about what a core library sees: Ubuntu's tracker takes a few reports per
# thousand machines a day, and most list it); most packages have far fewer dependents.
DEPENDENT_CRASHES_PER_MACHINE_DAY = 0.001
# Attempts to find a crashing machine in a group before giving the crash up (a group
# that small is almost never asked for one).
_MAX_TRIES = 5000
_LEVELS = np.arange(101)


def _seeded(*parts: object) -> random.Random:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def centrality(source_package: str) -> float:
    """How much of the dependents' crash traffic lists this package: a few libraries a
    lot, most packages little, some nothing (log-normal, fixed by the name)."""
    rng = _seeded("centrality", source_package)
    if rng.random() < 0.2:
        return 0.0
    return min(1.0, rng.lognormvariate(-1.5, 1.0))


def poisson(rng: random.Random, mean: float) -> int:
    if mean <= 0:
        return 0
    if mean > 50:
        return max(0, round(rng.gauss(mean, math.sqrt(mean))))
    threshold, count, product = math.exp(-mean), 0, rng.random()
    while product > threshold:
        count += 1
        product *= rng.random()
    return count


@dataclass
class Truth:
    machine_hours_on_new: float = 0.0
    crashes_on_new: int = 0
    hours_to_full: int | None = None


@dataclass(frozen=True)
class Bucket:
    signature: str
    function: str
    weight: float


class UpdateWorld:
    # The package whose crashes list this one's version (its dependents, as one), as
    # _dependents_reports names it.
    DEPENDENT_VERSION = "1.0-1"

    @property
    def dependent_package(self) -> str:
        return f"{self.update.source_package}-rdeps"

    def __init__(
        self,
        update: Update,
        *,
        seed: int,
        release: str | None = None,
        spec: WorldSpec = TIDY,
        start: datetime | None = None,
    ) -> None:
        self.update = update
        self.seed = seed
        # The realistic factors (overview.backtest.realism); the tidy world by default.
        self.spec = spec
        self.start = start
        self._late: list[tuple[datetime, CrashReportRecord]] = []
        self.release = release or update.release
        self.truth = Truth()
        rng = _seeded(seed, "buckets", update.id)
        # The previous version's crash buckets, with a realistic skew (Zipf-like weights).
        count = rng.randint(3, 8)
        weights = [1 / (rank + 1) ** 1.2 for rank in range(count)]
        total = sum(weights)
        self.buckets = [
            Bucket(
                f"/usr/bin/{update.source_package}:11:frame_{n}:{update.id}",
                f"frame_{n}",
                w / total,
            )
            for n, w in enumerate(weights)
        ]
        self.dependents = DEPENDENT_CRASHES_PER_MACHINE_DAY * centrality(update.source_package)
        self._eligible_hours = np.zeros(101)  # per draw: hours eligible so far
        self._machines: dict[int, tuple[str, int, float]] = {}
        self._drawer = apt_phasing.Drawer(update.source_package, update.version)

    # Machines ---------------------------------------------------------------------------

    def machine(self, index: int) -> tuple[str, int, float]:
        """(machine id, apt's draw, hours of eligibility it needs before installing)."""
        known = self._machines.get(index)
        if known is None:
            digest = hashlib.blake2b(
                f"{self.seed}:{self.update.id}:machine:{index}".encode(), digest_size=24
            ).digest()
            machine_id = digest[:16].hex()  # 32 hexadecimal digits, as /etc/machine-id
            uniform = (int.from_bytes(digest[16:], "big") + 0.5) / 2**64
            kind = digest[15] / 256  # which kind of machine: off for days, ignoring phasing
            off = kind < self.spec.off_share
            delay = self.spec.delay(uniform, off, self.update.uptake_hours)
            draw = self._drawer.draw(machine_id)
            if 1 - kind <= self.spec.ignorers:  # installs at once, whatever the percentage
                draw, delay = 0, 0.0
            known = self._machines[index] = (machine_id, draw, delay)
        return known

    def _installed(self, index: int, percentage: int) -> bool:
        _, draw, delay = self.machine(index)
        eligible = self._eligible_hours[draw] + (0.5 if percentage >= draw else 0.0)
        return eligible >= delay

    def installed_share(self, percentage: int) -> float:
        """The expected share on the new version in the middle of the current hour."""
        middle = self._eligible_hours + 0.5 * (_LEVELS <= percentage)
        obeying = float(np.mean(self.spec.installed(middle, self.update.uptake_hours)))
        return self.spec.ignorers + (1 - self.spec.ignorers) * obeying

    def fleet(self, number: int, percentage: int) -> list[tuple[str, bool]]:
        """The machines whose fleet agent reports this hour (spec.fleet_agents_per_hour, a
        uniform sample), each with whether it runs the new version. Its own draws: the
        crashes are the same with or without agents."""
        rng = _seeded(self.seed, self.update.id, "fleet", number)
        sample = []
        for _ in range(min(self.spec.fleet_agents_per_hour, self.update.machines)):
            index = rng.randrange(self.update.machines)
            known = index in self._machines
            sample.append((self.machine(index)[0], self._installed(index, percentage)))
            if not known:  # not kept: the agents would fill the cache with idle machines
                del self._machines[index]
        return sample

    def _pick(self, rng: random.Random, *, on_new: bool, percentage: int) -> str | None:
        for _ in range(_MAX_TRIES):
            index = rng.randrange(self.update.machines)
            if self._installed(index, percentage) == on_new:
                return self.machine(index)[0]
        return None

    # Hours ------------------------------------------------------------------------------

    def hour(self, number: int, start: datetime, percentage: int) -> list[CrashReportRecord]:
        """The reports of hour `number` (from `start`) at this percentage; then the hour
        is over: machines eligible during it count it towards their install."""
        update = self.update
        rng = _seeded(self.seed, update.id, "hour", number)
        share = self.installed_share(percentage)
        on_new = update.machines * share
        on_old = update.machines - on_new
        self.truth.machine_hours_on_new += on_new
        if self.truth.hours_to_full is None and percentage >= 100:
            self.truth.hours_to_full = number
        moment = start + number * HOUR
        reports: list[CrashReportRecord] = []
        busy = self.spec.activity(moment + HOUR / 2) * self.spec.shock(number)

        def crash(signature: str, function: str, version: str, new: bool) -> None:
            machine = self._pick(rng, on_new=new, percentage=percentage)
            if machine is None:
                return
            if new:
                self.truth.crashes_on_new += 1
            looping = self.spec.looping_share and rng.random() < self.spec.looping_share
            at = moment + timedelta(seconds=rng.randrange(3600))
            for _ in range(self.spec.looping_reports if looping else 1):
                reports.append(
                    CrashReportRecord(
                        external_id=f"{update.id}:{self.release}:{number}:{len(reports)}",
                        signature=signature,
                        release=self.release,
                        source_package=update.source_package,
                        version=version,
                        architecture="amd64",
                        reported_at=at,
                        system_id=machine,
                        stack_trace=f"#0 {function} ()",
                        function=function,
                        package_versions={update.source_package: version},
                    )
                )

        def count(mean: float) -> int:
            return poisson(rng, self._mixed(rng, mean * busy))

        for bucket in self.buckets:
            for _ in range(
                count(on_old * update.previous_crashes_per_machine_day * bucket.weight / 24)
            ):
                crash(bucket.signature, bucket.function, update.previous_version, False)
            for _ in range(count(on_new * update.new_crashes_per_machine_day * bucket.weight / 24)):
                crash(bucket.signature, bucket.function, update.version, True)
        for new_bucket in update.new_buckets:
            for _ in range(count(on_new * new_bucket.crashes_per_machine_day / 24)):
                crash(new_bucket.signature, "new_crash", update.version, True)
        reports.extend(self._dependents_reports(rng, number, moment, percentage, busy))
        self._eligible_hours += _LEVELS <= percentage
        return self._delivered(rng, reports, moment + HOUR)

    def _mixed(self, rng: random.Random, mean: float) -> float:
        """The hour's expected count, gamma-mixed when the world is overdispersed."""
        shape = self.spec.overdispersion_shape
        if not shape or mean <= 0:
            return mean
        return mean * rng.gammavariate(shape, 1 / shape)

    def _delivered(
        self, rng: random.Random, reports: list[CrashReportRecord], end: datetime
    ) -> list[CrashReportRecord]:
        """The reports that reach the tracker by `end`: late ones wait, booked at the time
        of their crash (so an hour's and a day's counts grow after they are over)."""
        if not self.spec.late_share and not self._late:
            return reports
        for report in reports:
            if rng.random() < self.spec.late_share:
                delay = rng.expovariate(1 / self.spec.late_mean_hours)
                self._late.append((report.reported_at + delay * HOUR, report))
            else:
                self._late.append((report.reported_at, report))
        due = [report for at, report in self._late if at <= end]
        self._late = [(at, report) for at, report in self._late if at > end]
        return due

    def _history_days(self, days: int) -> list[float]:
        """How busy each of the `days` days before the start was (the weekly cycle)."""
        if self.start is None:
            return [1.0] * days
        first = self.start - timedelta(days=days)
        return [self.spec.day_factor(first + timedelta(days=n)) for n in range(days)]

    def _dependents_reports(
        self, rng: random.Random, number: int, moment: datetime, percentage: int, busy: float = 1.0
    ) -> list[CrashReportRecord]:
        update = self.update
        if update.dependents is not None:
            return self._dependents_as_told(rng, number, moment, percentage, busy)
        dependent = f"{update.source_package}-rdeps"
        reports = []
        for n in range(poisson(rng, update.machines * self.dependents * busy / 24)):
            index = rng.randrange(update.machines)
            machine = self.machine(index)[0]
            version = (
                update.version if self._installed(index, percentage) else update.previous_version
            )
            reports.append(
                CrashReportRecord(
                    external_id=f"{update.id}:{self.release}:{number}:dependent:{n}",
                    signature=f"/usr/bin/{dependent}:11:elsewhere",
                    release=self.release,
                    source_package=dependent,
                    version="1.0-1",
                    architecture="amd64",
                    reported_at=moment + timedelta(seconds=rng.randrange(3600)),
                    system_id=machine,
                    stack_trace="#0 elsewhere ()",
                    function="elsewhere",
                    package_versions={update.source_package: version, dependent: "1.0-1"},
                )
            )
        return reports

    def _dependents_as_told(
        self, rng: random.Random, number: int, moment: datetime, percentage: int, busy: float
    ) -> list[CrashReportRecord]:
        """The dependents as the scenario says they crash: two of them, `-app` and
        `-rdeps`, each half the traffic, `ratio` × as often on machines with the new version.
        A dependent's own update (`-app`'s) goes to exactly the machines that take this
        one, in the same run: the hardest case for telling whose fault its crashes are."""
        update = self.update
        told = update.dependents
        assert told is not None
        rate = told.crashes_per_machine_day
        if rate is None:
            rate = self.dependents
        share = self.installed_share(percentage)
        own = told.own_update
        reports: list[CrashReportRecord] = []
        for name in (f"{update.source_package}-app", f"{update.source_package}-rdeps"):
            for on_new in (False, True):
                mean = update.machines * (share if on_new else 1 - share) * rate / 2 / 24
                version = DEPENDENT_VERSION
                if on_new:
                    mean *= told.ratio
                    if own is not None and name.endswith("-app"):
                        mean *= own.ratio
                        version = own.version
                for _ in range(poisson(rng, self._mixed(rng, mean * busy))):
                    machine = self._pick(rng, on_new=on_new, percentage=percentage)
                    if machine is None:
                        continue
                    library = update.version if on_new else update.previous_version
                    reports.append(
                        CrashReportRecord(
                            external_id=f"{update.id}:{self.release}:{number}:{name}:{len(reports)}",
                            signature=f"/usr/bin/{name}:11:elsewhere",
                            release=self.release,
                            source_package=name,
                            version=version,
                            architecture="amd64",
                            reported_at=moment + timedelta(seconds=rng.randrange(3600)),
                            system_id=machine,
                            stack_trace="#0 elsewhere ()",
                            function="elsewhere",
                            package_versions={update.source_package: library, name: version},
                        )
                    )
        return reports

    # The previous version's past ----------------------------------------------------------

    def dependents_history(self, days: int) -> list[int]:
        """Daily crash reports of the packages that depend on this one over `days` days
        before the start: other packages' history, as the tracker keeps every package's
        (the judge compares the previous version's days with the release's other packages'
        days, so that busy and quiet days cancel)."""
        rng = _seeded(self.seed, self.update.id, "dependents-history")
        # Poisson, as their reports since the start (_dependents_reports).
        return [
            poisson(rng, self.update.machines * self.dependents * factor)
            for factor in self._history_days(days)
        ]

    def history(self, days: int) -> tuple[list[int], dict[str, tuple[int, int]]]:
        """Daily crash counts of the previous version over `days` days before the start,
        when every machine ran it; and per bucket seen in them, (reports, machines)."""
        update = self.update
        rng = _seeded(self.seed, update.id, "history")
        daily = [
            poisson(
                rng,
                self._mixed(
                    rng, update.machines * update.previous_crashes_per_machine_day * factor
                ),
            )
            for factor in self._history_days(days)
        ]
        total = sum(daily)
        seen: dict[str, tuple[int, int]] = {}
        remaining = total
        for n, bucket in enumerate(self.buckets):
            share = bucket.weight / sum(b.weight for b in self.buckets[n:])
            reports = remaining if n == len(self.buckets) - 1 else _binomial(rng, remaining, share)
            remaining -= reports
            if reports:
                machines = update.machines * (1 - math.exp(-reports / update.machines))
                seen[bucket.signature] = (reports, max(1, round(machines)))
        return daily, seen


def _binomial(rng: random.Random, trials: int, p: float) -> int:
    if trials > 200:
        mean, spread = trials * p, math.sqrt(trials * p * (1 - p))
        return min(trials, max(0, round(rng.gauss(mean, spread))))
    return sum(1 for _ in range(trials) if rng.random() < p)
