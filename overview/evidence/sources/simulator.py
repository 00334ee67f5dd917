"""The simulated archive's crash stream: the embedded default crash feed.

Crash reports come in per hour, Poisson-distributed, in proportion to the share of
machines running each version of the simulated world (packages.sources.simulator): the
phased cohort for the new one, the rest for the previous one. Each update's hidden
regression (a new bucket, a rise in rate, a false alarm) shows from its onset on.
Plain Python, no Django.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterator
from datetime import datetime, timedelta

from overview.evidence.sources.base import CrashQuery, CrashReportRecord
from packages.sources.simulated_world import HOUR, Upload, seeded_rng
from packages.sources.simulator import Simulator

ARCHES = ("amd64", "amd64", "amd64", "arm64", "armhf", "ppc64el", "s390x")
FUNCTIONS = (
    "g_main_context_dispatch",
    "g_closure_invoke",
    "raise",
    "abort",
    "__libc_start_main",
    "malloc_consolidate",
    "_int_free",
    "strlen",
    "g_object_unref",
    "gtk_widget_get_toplevel",
    "dbus_connection_dispatch",
    "PyEval_EvalFrameDefault",
    "std::__throw_bad_alloc",
    "json_object_get",
    "xmlParseChunk",
    "png_read_row",
    "inflate",
    "SSL_read",
)
# dpkg's words when a maintainer script fails, as apport's package hook puts them in the
# report's ErrorMessage and its DuplicateSignature.
INSTALL_ERRORS = (
    "installed post-installation script subprocess returned error exit status 1",
    "new pre-installation script subprocess returned error exit status 1",
    "installed pre-removal script subprocess returned error exit status 1",
    "trying to overwrite a file which is also in another package",
)


def poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:  # normal approximation keeps large means cheap
        return max(0, round(rng.gauss(lam, math.sqrt(lam))))
    threshold, k, product = math.exp(-lam), 0, rng.random()
    while product > threshold:
        k += 1
        product *= rng.random()
    return k


class SimulatedCrashFeed:
    """Crash reports of the simulated world, for overview.judges.local.LocalCrashSource."""

    name = "simulator"

    def __init__(self, world: Simulator) -> None:
        self.world = world
        self.seed = world.seed
        self._bucket_cache: dict[str, list[tuple[str, str, float]]] = {}
        self._day_cache: dict[tuple, list] = {}
        self._dependency_cache: dict[str, tuple[str, ...]] = {}
        self._libraries: tuple[list[str], dict[str, int]] | None = None

    def _buckets(self, package: str, binary: str) -> list[tuple[str, str, float]]:
        """(signature, function, weight) of the package's long-standing crash buckets."""
        cached = self._bucket_cache.get(package)
        if cached is None:
            rng = seeded_rng(self.seed, "buckets", package)
            cached = []
            for index in range(1 + int(rng.random() * 4)):
                function = rng.choice(FUNCTIONS)
                signature = f"/usr/bin/{binary}:11:{function}:{package}_{index}"
                cached.append((signature, function, rng.uniform(0.2, 1.0)))
            self._bucket_cache[package] = cached
        return cached

    def regression_bucket(self, upload: Upload) -> tuple[str, str]:
        rng = seeded_rng(
            self.seed, "regression-bucket", upload.release, upload.package, upload.version
        )
        function = rng.choice(FUNCTIONS)
        binary = rng.choice(upload.binaries)
        if upload.regression is not None and upload.regression.kind == "install_failure":
            # apport's DuplicateSignature of a package failure: package:<binary>:<version>:<error>.
            error = rng.choice(INSTALL_ERRORS)
            return f"package:{binary}:{upload.version}:{error}", error
        return f"/usr/bin/{binary}:6:{function}:{upload.package}:{upload.version}", function

    def _hourly_counts(
        self, rng: random.Random, upload: Upload, moment: datetime, share_left: float
    ) -> list[tuple[str, str, int]]:
        """Crashes of one version in one hour, per bucket; always the same draws per hour."""
        share = upload.ramp_share(moment) * share_left
        regression = upload.regression
        if regression is not None and moment < upload.published + regression.onset_hours * HOUR:
            regression = None  # not showing yet
        rate_factor = (
            regression.factor if regression and regression.kind == "increased_rate" else 1.0
        )
        counts = [
            (signature, function, poisson(rng, upload.popularity * weight * share * rate_factor))
            for signature, function, weight in self._buckets(upload.package, upload.binaries[0])
        ]
        if regression and regression.kind in ("new_bucket", "false_alarm", "install_failure"):
            signature, function = self.regression_bucket(upload)
            counts.append((signature, function, poisson(rng, regression.factor * max(share, 0.01))))
        return counts

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        """Crash reports of every version with machines on it, hour by hour in (since, now]."""
        since = since or now - timedelta(days=15)
        first_hour = since.replace(minute=0, second=0, microsecond=0) + HOUR
        for release in self.world.release_records:
            for package in self.world.packages:
                timeline = self.world.timeline(release, package, until=now)
                for position, upload in enumerate(timeline):
                    following = timeline[position + 1] if position + 1 < len(timeline) else None
                    yield from self._upload_reports(upload, following, first_hour, now)

    def _upload_reports(
        self, upload: Upload, following: Upload | None, first_hour: datetime, now: datetime
    ) -> Iterator[CrashReportRecord]:
        begin = max(first_hour, upload.published.replace(minute=0, second=0) + HOUR)
        # Machines keep running a version until the next one has reached them.
        end = now if following is None else min(now, following.published + timedelta(hours=60))
        day = begin.replace(hour=0)
        while day <= end:
            for moment, counts in self._day_counts(upload, following, day):
                if not begin <= moment <= end:
                    continue
                for signature, function, count in counts:
                    if not count:
                        continue
                    report_rng = seeded_rng(self.seed, "report", upload.version, signature, moment)
                    for index in range(count):
                        yield self._report(report_rng, upload, signature, function, moment, index)
            day += timedelta(days=1)

    def _day_counts(
        self, upload: Upload, following: Upload | None, day: datetime
    ) -> list[tuple[datetime, list[tuple[str, str, int]]]]:
        key = (upload.release, upload.package, upload.version, day)
        cached = self._day_cache.get(key)
        if cached is None:
            # One generator per version and day, drawn for every hour of the day, so the
            # counts of an hour do not depend on which window asked for it.
            rng = seeded_rng(
                self.seed, "crashes", upload.release, upload.package, upload.version, day
            )
            cached = []
            for hour in range(24):
                moment = day + hour * HOUR
                share_left = 1.0 - (following.ramp_share(moment) if following else 0.0)
                cached.append((moment, self._hourly_counts(rng, upload, moment, share_left)))
            if len(self._day_cache) > 200_000:
                self._day_cache.clear()
            self._day_cache[key] = cached
        return cached

    def _report(
        self,
        rng: random.Random,
        upload: Upload,
        signature: str,
        function: str,
        moment: datetime,
        index: int,
    ) -> CrashReportRecord:
        at = moment - timedelta(seconds=rng.randint(0, 3599))
        external_id = hashlib.blake2b(
            f"{upload.release}:{upload.package}:{upload.version}:{signature}:{moment.isoformat()}:{index}".encode(),
            digest_size=12,
        ).hexdigest()
        system = f"{rng.randint(0, 5000):064x}"
        arch = rng.choice(ARCHES)
        frames = [function, *rng.sample(FUNCTIONS, 4), "main", "__libc_start_main"]
        trace = "\n".join(
            f"#{n}  0x{rng.getrandbits(48):012x} in {frame} () from /usr/lib/{arch}-linux-gnu/lib{upload.package}.so"
            for n, frame in enumerate(frames)
        )
        install_failure = signature.startswith("package:")
        if install_failure:
            # A package failure has no stack: its evidence is dpkg's terminal log.
            binary = signature.split(":")[1]
            trace = (
                f"Preparing to unpack .../{binary}_{upload.version}_{arch}.deb ...\n"
                f"Unpacking {binary} ({upload.version}) over ({upload.previous_version}) ...\n"
                f"Setting up {binary} ({upload.version}) ...\n"
                f"dpkg: error processing package {binary} (--configure):\n {function}\n"
                f"Errors were encountered while processing:\n {binary}"
            )
        return CrashReportRecord(
            external_id=external_id,
            signature=signature,
            release=upload.release,
            source_package=upload.package,
            version=upload.version,
            architecture=arch,
            reported_at=at,
            system_id=system,
            stack_trace=trace,
            function=function,
            environment={
                "LANG": rng.choice(("en_US.UTF-8", "de_DE.UTF-8", "fr_FR.UTF-8", "C.UTF-8")),
                "SHELL": "/bin/bash",
                "Uname": f"Linux 6.8.0-{rng.randint(30, 60)}-generic {arch}",
            },
            package_versions=self._installed_versions(rng, upload, moment),
            from_proposed=rng.random() < 0.03,
            automated_testing=rng.random() < 0.01,
            problem_type="Package" if install_failure else "Crash",
        )

    # What else the crashing machine has installed ---------------------------------------

    def _dependencies(self, package: str) -> tuple[str, ...]:
        """The libraries a package depends on: none to three, fixed by the seed."""
        known = self._dependency_cache.get(package)
        if known is None:
            rng = seeded_rng(self.seed, "depends", package)
            libraries = self._libraries_but(package)
            count = min(rng.choice((0, 1, 1, 2, 3)), len(libraries))
            known = self._dependency_cache[package] = tuple(rng.sample(libraries, count))
        return known

    def _libraries_but(self, package: str) -> list[str]:
        """The world's libraries in order, without `package`: listed once, not per package,
        since scanning every name for each package grows with the square of the archive."""
        if self._libraries is None:
            names = [p for p in self.world.packages if p.startswith("lib")]
            self._libraries = names, {name: index for index, name in enumerate(names)}
        names, index = self._libraries
        own = index.get(package)
        return names if own is None else names[:own] + names[own + 1 :]

    def _installed_versions(
        self, rng: random.Random, upload: Upload, moment: datetime
    ) -> dict[str, str]:
        """The versions apport lists with a crash: the package's own, and those of the
        libraries it depends on as this machine has them (the new version of a library
        that is phasing when the machine is in its phase, else the one before): how the
        judge measures the share of machines on a new version."""
        versions = {upload.binaries[0]: upload.version, "libc6": "2.39-0ubuntu8.4"}
        release = next(r for r in self.world.release_records if r.codename == upload.release)
        for dependency in self._dependencies(upload.package):
            uploads = self.world.timeline(release, dependency, until=moment)
            if uploads:
                current = uploads[-1]
                on_new = rng.random() < current.ramp_share(moment)
                versions[current.binaries[0]] = (
                    current.version if on_new else current.previous_version
                )
        return versions

    # A simulated tracker outage for a few packages, now and then.

    def crash_data_outage(self, query: CrashQuery, *, now: datetime) -> str:
        rng = seeded_rng(
            self.seed, "outage", query.release, query.source_package, now.strftime("%Y%m%d%H")
        )
        if rng.random() < 0.004:
            return "simulated error tracker timeout"
        return ""
