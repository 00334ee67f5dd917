"""A deterministic simulated archive: the embedded default publication source.

The world is a pure function of the seed: six releases, a few hundred source packages
with plausible names, people who sign and upload, and for each (release, package) a
timeline of stable release updates. Each update may carry a hidden regression: a crash
bucket that is new in that version, a rise in the crash rate, or a false alarm (a bucket
that looks new but was not caused by the update, for a triager to override). Crash
reports come in per hour, Poisson-distributed, in proportion to the share of machines
running each version: the phased cohort for the new one, the rest for the previous one
(overview.evidence.sources.simulator draws them from this world).

What the simulator cannot know is what the controller did; it assumes each update
follows the default ramp (10% + 10 points about every 6 hours) until a regression has been
visible for a while, when it assumes the update was pulled. Plain Python, no Django.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from functools import cached_property

from packages.domain.dependencies import Relation
from packages.sources.base import (
    PersonRecord,
    PublicationRecord,
    ReleaseRecord,
    Watch,
    WriteResult,
)
from packages.sources.simulated_world import (
    _CHANGELOG_FIXES,
    _DEPENDENT,
    _FIRST,
    _KNOWN_SOURCES,
    _LAST,
    _NEEDED,
    _RELEASED,
    _WORDS,
    RELEASES,
    TOGETHER_MEAN_DAYS,
    Regression,
    Together,
    Upload,
    seeded_rng,
)

# How many package names are drawn from word pairs before the rest are numbered: under
# the 6,400 pairs, so the draw ends quickly; today's archive (5,334 names) is all drawn.
_DRAWN_NAMES = 5_600


class Simulator:
    """Publication source and crash feed of a simulated archive."""

    name = "simulator"
    can_write = True
    # The simulated archive takes whatever percentage is written; what it reports is only
    # its own assumption, so a sync never adopts it over the controller's.
    tracks_percentage = False

    def __init__(
        self,
        *,
        seed: int = 1,
        packages: int = 300,
        releases: int = len(RELEASES),
        mean_days_between_updates: float = 40.0,
        anchor: datetime = datetime(2026, 9, 1, tzinfo=UTC),
        calm_until: datetime | None = None,
    ) -> None:
        self.seed = seed
        self.package_count = packages
        self.release_records = RELEASES[:releases]
        self.mean_days = mean_days_between_updates
        # Timelines start here (or at the release), whatever moment is asked about, so the
        # world seen by one sync is the world seen by the next.
        self.anchor = anchor
        # Updates published before this carry no hidden regression: a demo's past that
        # people already dealt with, so its replay does not open on a pile of halts.
        # Everything else (versions, dates, people) is the same world.
        self.calm_until = calm_until
        self.writes: list[tuple[str, str, str, int]] = []
        self._timelines: dict[tuple[str, str], tuple[datetime, list[Upload]]] = {}

    # The world -----------------------------------------------------------------------

    @cached_property
    def packages(self) -> list[str]:
        names = list(_KNOWN_SOURCES)
        seen = set(names)
        rng = seeded_rng(self.seed, "packages")
        # Names are drawn from word pairs (6,400 of them) until most are taken; an archive
        # larger than that (the bench's ten times) numbers them again, "libnetscan2", since
        # drawing on would take ever longer and, past 6,400, never end.
        drawn = min(self.package_count, _DRAWN_NAMES)
        while len(names) < drawn:
            word = rng.choice(_WORDS) + rng.choice(_WORDS)
            candidate = rng.choice((f"lib{word}", f"{word}", f"python-{word}", f"{word}-utils"))
            if candidate not in seen:
                seen.add(candidate)
                names.append(candidate)
        bases = names[len(_KNOWN_SOURCES) :]
        for number in itertools.count(2):
            if len(names) >= self.package_count:
                break
            for base in bases[: self.package_count - len(names)]:
                names.append(f"{base}{number}")
        return names[: self.package_count]

    @cached_property
    def people(self) -> list[PersonRecord]:
        people = []
        for first, last in zip(_FIRST, _LAST, strict=True):
            account = f"{first[0]}{last}".lower().replace("ł", "l")
            people.append(PersonRecord(account, f"{first} {last}", f"{account}@ubuntu.com"))
        return people

    def releases(self) -> list[ReleaseRecord]:
        return list(self.release_records)

    def _package_traits(
        self, package: str
    ) -> tuple[str, float, tuple[str, ...], tuple[int, int, int]]:
        rng = seeded_rng(self.seed, "traits", package)
        component = "main" if rng.random() < 0.7 else "universe"
        popularity = rng.lognormvariate(-3.4, 1.1)  # most packages crash rarely, a few a lot
        stem = package.removeprefix("lib").removesuffix("-utils")
        if package in _NEEDED or package in _DEPENDENT:
            together = _NEEDED.get(package) or _DEPENDENT[package]
            grouped = (
                together.binaries if package == together.needed else together.dependent_binaries
            )
            return component, popularity, grouped, (rng.randint(0, 4), rng.randint(0, 40), 0)
        binaries = tuple(
            dict.fromkeys(
                (package, f"{stem}-common", f"lib{stem}0" if rng.random() < 0.5 else f"{stem}-doc")
            )
        )
        upstream = (rng.randint(0, 4), rng.randint(0, 40), rng.randint(0, 30))
        return component, popularity, binaries, upstream

    def _base_version(self, package: str, release: ReleaseRecord) -> str:
        _, _, _, (major, minor, patch) = self._package_traits(package)
        rng = seeded_rng(self.seed, "base", package, release.codename)
        bump = RELEASES.index(release)  # older releases carry older upstream versions
        minor = max(0, minor - 3 * bump)
        debian = rng.randint(1, 6)
        return f"{major}.{minor}.{patch}-{debian}ubuntu{rng.randint(0, 3)}"

    def timeline(self, release: ReleaseRecord, package: str, *, until: datetime) -> list[Upload]:
        """Every update of one source in one release's Updates pocket, oldest first."""
        key = (release.codename, package)
        cached = self._timelines.get(key)
        if cached is None or cached[0] < until:
            # Generate ahead: the timeline is the same prefix however far it goes.
            ahead = until + timedelta(days=30)
            cached = (ahead, self._generate_timeline(release, package, until=ahead))
            self._timelines[key] = cached
        return [upload for upload in cached[1] if upload.published <= until]

    def _generate_timeline(
        self, release: ReleaseRecord, package: str, *, until: datetime
    ) -> list[Upload]:
        together = _DEPENDENT.get(package)
        if together is not None and together.needed in self.packages:
            return self._dependent_timeline(release, together, until=until)
        rng = seeded_rng(self.seed, "timeline", release.codename, package)
        mean_days = TOGETHER_MEAN_DAYS if package in _NEEDED else self.mean_days
        component, popularity, binaries, _ = self._package_traits(package)
        base = self._base_version(package, release)
        start = max(_RELEASED[release.codename], self.anchor)
        moment = start + timedelta(hours=rng.uniform(0, mean_days * 24))
        previous = base
        uploads: list[Upload] = []
        # Earlier updates of a long-lived release were fewer than now: keep the number modest.
        number = 1 + int((start - _RELEASED[release.codename]).days / (4 * self.mean_days))
        while moment <= until:
            version = f"{base}.{number}"
            person_rng = seeded_rng(self.seed, "people", release.codename, package, number)
            uploader = person_rng.choice(self.people)
            signer = uploader if person_rng.random() < 0.6 else person_rng.choice(self.people)
            sponsor = signer if signer != uploader else None
            regression = self._regression(rng)
            gap_days = rng.expovariate(1 / mean_days)
            if regression and regression.kind != "false_alarm":
                gap_days = rng.uniform(1.5, 4)  # a regression is fixed by a new upload soon
            if regression is None:
                # Drawn apart, so the rest of the world stays as it was without them.
                regression = self._install_failure(release.codename, package, number)
                if regression is not None:
                    # A failing maintainer script is fixed by a new upload soon, too.
                    fix_rng = seeded_rng(
                        self.seed, "install-fix", release.codename, package, number
                    )
                    gap_days = fix_rng.uniform(1.5, 4)
            if self.calm_until is not None and moment < self.calm_until:
                regression = None
            following = moment + timedelta(days=gap_days)
            uploads.append(
                Upload(
                    release=release.codename,
                    package=package,
                    version=version,
                    previous_version=previous,
                    published=moment.replace(microsecond=0),
                    superseded=following.replace(microsecond=0),
                    signer=signer,
                    uploader=uploader,
                    sponsor=sponsor,
                    component=component,
                    binaries=binaries,
                    popularity=popularity,
                    regression=regression,
                    relations=self._own_relations(package, binaries, version),
                )
            )
            previous, moment, number = version, following, number + 1
        return uploads

    @staticmethod
    def _own_relations(
        package: str, binaries: tuple[str, ...], version: str
    ) -> tuple[Relation, ...]:
        """A -dev package needs its library at exactly its version (same source)."""
        if package not in _NEEDED:
            return ()
        library = _NEEDED[package].names
        return tuple(
            Relation("depends", b, library, "=", version) for b in binaries if b.endswith("-dev")
        )

    def _dependent_timeline(
        self, release: ReleaseRecord, together: Together, *, until: datetime
    ) -> list[Upload]:
        """An upload of the dependent with each upload of what it needs, a few hours
        before or after it (the archive publishes them apart), naming its new version."""
        rng = seeded_rng(self.seed, "together", release.codename, together.dependent)
        component, popularity, binaries, _ = self._package_traits(together.dependent)
        base = self._base_version(together.dependent, release)
        needed = self._generate_timeline(release, together.needed, until=until + timedelta(days=1))
        uploads: list[Upload] = []
        previous = base
        for number, upload in enumerate(needed, start=1):
            offset = timedelta(hours=rng.uniform(-5, 2))
            published = upload.published + offset
            if published > until:
                break
            version = f"{base}.{number}"
            regression = self._regression(rng)
            if together.kind == "breaks":
                relation = Relation("breaks", binaries[0], together.names, "<<", upload.version)
            else:
                relation = Relation("depends", binaries[0], together.names, ">=", upload.version)
            person_rng = seeded_rng(
                self.seed, "people", release.codename, together.dependent, number
            )
            uploader = person_rng.choice(self.people)
            uploads.append(
                Upload(
                    release=release.codename,
                    package=together.dependent,
                    version=version,
                    previous_version=previous,
                    published=published.replace(microsecond=0),
                    superseded=(upload.superseded + offset).replace(microsecond=0),
                    signer=uploader,
                    uploader=uploader,
                    sponsor=None,
                    component=component,
                    binaries=binaries,
                    popularity=popularity,
                    regression=None
                    if self.calm_until is not None and published < self.calm_until
                    else regression,
                    relations=(relation,),
                )
            )
            previous = version
        return uploads

    @staticmethod
    def _regression(rng: random.Random) -> Regression | None:
        roll = rng.random()
        onset = rng.randint(2, 40)
        if roll < 0.06:
            return Regression("new_bucket", onset, rng.uniform(0.8, 3.0))
        if roll < 0.09:
            return Regression("increased_rate", onset, rng.uniform(4.0, 8.0))
        if roll < 0.11:
            return Regression("false_alarm", onset, rng.uniform(0.8, 2.0))
        return None

    def _install_failure(self, release: str, package: str, number: int) -> Regression | None:
        """Now and then an update whose maintainer script fails on upgrade: apport's
        "package X failed to install/upgrade" reports, a new bucket of their own."""
        rng = seeded_rng(self.seed, "install-failure", release, package, number)
        if rng.random() < 0.025:
            return Regression("install_failure", rng.randint(1, 30), rng.uniform(1.0, 3.0))
        return None

    def uploads(self, *, until: datetime, release: str | None = None) -> Iterator[Upload]:
        for record in self.release_records:
            if release is not None and record.codename != release:
                continue
            for package in self.packages:
                yield from self.timeline(record, package, until=until)

    # PublicationSource ---------------------------------------------------------------

    def publications(
        self, *, release: str, since: datetime | None, now: datetime, watch: Watch | None = None
    ) -> Iterator[PublicationRecord]:
        for upload in self.uploads(until=now, release=release):
            if (
                since is not None
                and upload.published < since
                and not since <= upload.superseded <= now
            ):
                continue  # nothing about it changed since
            superseded = upload.superseded <= now
            yield PublicationRecord(
                release=upload.release,
                source_package=upload.package,
                version=upload.version,
                date_published=upload.published,
                phased_update_percentage=round(100 * upload.ramp_share(now)),
                previous_version=upload.previous_version,
                component=upload.component,
                status="superseded" if superseded else "published",
                date_superseded=upload.superseded if superseded else None,
                binaries=upload.binaries,
                signer=upload.signer,
                uploader=upload.uploader,
                sponsor=upload.sponsor,
                relations=upload.relations,
                changelog=self.changelog(upload),
            )

    def changelog(self, upload: Upload) -> str:
        """The upload's changelog entry as dpkg-parsechangelog prints it, closing one to three
        Launchpad bugs with "LP: #N", as every stable release update must."""
        rng = seeded_rng(self.seed, "changelog", upload.release, upload.package, upload.version)
        bugs = [rng.randint(2_000_000, 2_140_000) for _ in range(rng.randint(1, 3))]
        what = rng.choice(_CHANGELOG_FIXES)
        lines = [
            f"{upload.package} ({upload.version}) {upload.release}; urgency=medium",
            "",
            f"  * d/p/lp{bugs[0]}.patch: {what} (LP: #{bugs[0]})",
        ]
        if len(bugs) > 1:
            lines.append(
                "  * Cherry-pick upstream fixes for regressions in the stable branch"
                f" (LP: #{', #'.join(map(str, bugs[1:]))})"
            )
        lines += [
            "",
            f" -- {upload.uploader.name} <{upload.uploader.email}>  {format_datetime(upload.published)}",
        ]
        return "\n".join(lines)

    def set_percentage(
        self, *, release: str, pocket: str, source_package: str, version: str, percentage: int
    ) -> WriteResult:
        self.writes.append((release, source_package, version, percentage))
        return WriteResult("applied", "recorded by the simulator")

    def check_write(self) -> WriteResult:
        return WriteResult("applied", "the simulator takes every percentage")
