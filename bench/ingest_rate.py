"""Reports per second through the real ingest path, on a small generated world.

    DATABASE_URL=postgres://.../somedb python -m bench.ingest_rate --reports 100000 \
        [--in-phasing 20000 --archive 100000]

Cheaper than the bench's ingest part (no seeded archive, no simulator): releases and
packages are created, then reports spread over packages, versions, buckets and hours are
ingested batch by batch as the crash sync does, and the rate is printed as JSON. The
database named by DATABASE_URL must be a scratch one; it is migrated and written to.

`--in-phasing N` first syncs an archive as large as the bench's at scale N / 2,000: N
updates in phasing, the reports' packages among them, and older publications up to
`--archive` in all; each report then lists its own binary and a library in phasing at
one of the library's two versions, as the simulator's reports do, so the dependents'
counts have an archive's updates to look through. Made once per database (the same
arguments reuse it), so that two versions of the code can be timed on the same archive.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path


def generated(
    count: int,
    *,
    packages: int,
    hours: int,
    start: datetime,
    seed: int = 1,
    in_archive: bool = False,
) -> Iterator:
    """Reports as the error tracker hands them over: hour by hour, many packages at once.
    `in_archive`: each lists its own binary and a library in phasing (archive())."""
    from overview.evidence.sources.base import CrashReportRecord

    rng = random.Random(seed)
    per_hour = max(1, count // hours)
    made = 0
    for hour in range(hours):
        moment = start + timedelta(hours=hour)
        for _ in range(per_hour):
            if made >= count:
                return
            p = rng.randrange(packages)
            v = rng.randrange(2)
            b = rng.randrange(8)
            library = f"pkg{(p + 1) % packages}" if in_archive else f"lib{(p + 1) % packages}"
            listed = {library: f"1.{rng.randrange(2)}-1ubuntu0.1" if in_archive else f"2.{v}-1"}
            if in_archive:
                listed[f"pkg{p}"] = f"1.{v}-1ubuntu0.1"
            yield CrashReportRecord(
                external_id=f"g{seed}-{made}",
                signature=f"/usr/bin/pkg{p}:11:fn{b}",
                release="noble",
                source_package=f"pkg{p}",
                version=f"1.{v}-1ubuntu0.1",
                architecture="amd64",
                reported_at=moment + timedelta(seconds=rng.randrange(3600)),
                system_id=f"{rng.randrange(50_000):064x}",
                stack_trace=f"#0 fn{b} () from /usr/lib/libpkg{p}.so\n#1 main ()",
                function=f"fn{b}",
                environment={"LANG": "C.UTF-8"},
                package_versions={**listed, "libc6": "2.39-0ubuntu8"},
                from_proposed=rng.random() < 0.03,
                automated_testing=rng.random() < 0.01,
                problem_type="Crash",
            )
            made += 1


class _Archive:
    """A publication source: `in_phasing` updates (binaries pkgN and pkgN-data) of noble in
    phasing, each with older superseded versions, `total` publications in all."""

    name = "bench-archive"
    can_write = False

    def __init__(self, *, in_phasing: int, total: int, start: datetime) -> None:
        self.in_phasing, self.start = in_phasing, start
        self.older = max(0, total - in_phasing) // max(1, in_phasing)  # versions a package

    @property
    def size(self) -> int:
        return self.in_phasing * (self.older + 1)

    def releases(self):
        from packages.sources.base import ReleaseRecord

        return [ReleaseRecord("noble", "24.04")]

    def publications(self, *, release, since, now, watch=None):
        from packages.sources.base import PublicationRecord

        older = self.older
        for k in range(self.in_phasing):
            binaries = (f"pkg{k}", f"pkg{k}-data")
            for n in range(older):
                yield PublicationRecord(
                    release=release,
                    source_package=f"pkg{k}",
                    version=f"0.{n}-1ubuntu0.1",
                    date_published=self.start - timedelta(days=older - n + 1),
                    phased_update_percentage=None,
                    status="superseded",
                    binaries=binaries,
                )
            yield PublicationRecord(
                release=release,
                source_package=f"pkg{k}",
                version="1.1-1ubuntu0.1",
                previous_version="1.0-1ubuntu0.1",
                date_published=self.start,
                phased_update_percentage=30,
                binaries=binaries,
            )


def archive(*, in_phasing: int, total: int, start: datetime) -> None:
    """Sync the archive of _Archive, unless this database holds it already."""
    from django.db import connection

    from packages.models import Publication
    from packages.services.sync import publications_sync

    source = _Archive(in_phasing=in_phasing, total=total, start=start)
    if Publication.objects.count() != source.size:
        Publication.objects.all().delete()
        publications_sync(source, now=start)
        # As autovacuum soon would: planned on an empty table's statistics, the ingest's
        # statements would read the archive as if it held nothing.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def _backend_pid(connection) -> int | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _backend_cpu(pid: int | None) -> float:
    """User and system CPU seconds of a PostgreSQL backend on this machine (0 elsewhere)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=100_000)
    parser.add_argument("--packages", type=int, default=500)
    parser.add_argument("--hours", type=int, default=48)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--statements", action="store_true", help="time each statement")
    parser.add_argument("--in-phasing", type=int, default=0, help="updates in phasing")
    parser.add_argument("--archive", type=int, default=0, help="publications in all")
    args = parser.parse_args(argv)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", "--noinput", verbosity=0)
    from overview.evidence.ingest import crash_reports_ingest
    from packages.models import Release, SourcePackage

    Release.objects.get_or_create(codename="noble", defaults={"version": "24.04"})
    SourcePackage.objects.bulk_create(
        [SourcePackage(name=f"pkg{p}") for p in range(args.packages)], ignore_conflicts=True
    )
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(
        hours=args.hours
    )
    if args.in_phasing:
        # The archive's clock is fixed (its reuse compares its size only); the reports'
        # hours stay the last ones, as the ingest refuses reports older than the retention.
        archive(
            in_phasing=max(args.in_phasing, args.packages),
            total=args.archive,
            start=datetime(2026, 11, 1, tzinfo=UTC),
        )
    records = list(
        generated(
            args.reports,
            packages=args.packages,
            hours=args.hours,
            start=start,
            seed=args.seed,
            in_archive=bool(args.in_phasing),
        )
    )
    spent: Counter[str] = Counter()

    def timed(execute, sql, params, many, context):
        at = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent[sql[:80]] += time.perf_counter() - at

    backend = _backend_pid(connection)
    cpu_before = time.process_time() + _backend_cpu(backend)
    started = time.perf_counter()
    with connection.execute_wrapper(timed) if args.statements else nullcontext():
        summary = crash_reports_ingest(records)
    took = time.perf_counter() - started
    cpu = time.process_time() + _backend_cpu(backend) - cpu_before
    for sql, seconds in spent.most_common(8):
        print(f"{seconds:7.2f} s  {sql}")
    print(
        json.dumps(
            {
                "reports": summary.inserted,
                "skipped": summary.skipped,
                "seconds": round(took, 2),
                "reports_per_s": round(summary.inserted / took) if took else None,
                # CPU of this process and of its PostgreSQL backend: what the ingest costs
                # on a machine shared with other work, where the wall clock says little.
                "cpu_s": round(cpu, 2),
                "reports_per_cpu_s": round(summary.inserted / cpu) if cpu else None,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
