"""Crash reports into the database: stored once, counted as the error tracker counts."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import replace
from datetime import timedelta

import pytest
from django.db import OperationalError, connection

from overview.evidence import ingest, ingest_checks, ingest_store
from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashReportRecord
from overview.models import (
    BucketSystem,
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    DependentCrashCount,
    HourlyCrashCount,
    VersionSighting,
)
from overview.models.evidence import system_key
from packages.services import bulk
from packages.services.sync import publications_sync
from tests.packages.services.sync_fakes import T0, ListSource, record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture(autouse=True, params=["native", "portable"])
def ingest_path(request, monkeypatch):
    """Every test through PostgreSQL's COPY path and through the portable ORM path."""
    if request.param == "portable":
        monkeypatch.setattr(bulk, "uses_postgresql", lambda: False)
    elif connection.vendor != "postgresql":
        pytest.skip("the COPY path is PostgreSQL's")
    return request.param


def crash(n: int, **fields) -> CrashReportRecord:
    defaults = {
        "external_id": f"r{n}",
        "signature": "/usr/bin/apport:11:crash",
        "release": "noble",
        "source_package": "apport",
        "version": "2.0-1ubuntu0.1",
        "architecture": "amd64",
        "reported_at": T0,
        "system_id": f"s{n % 3}",
        "stack_trace": "#0 crash ()",
    }
    return CrashReportRecord(**{**defaults, **fields})


def test_ingesting_the_same_reports_twice_stores_them_once_and_counts_them_once():
    publications_sync(ListSource([record()]), now=T0)
    reports = [crash(n) for n in range(7)]
    first = crash_reports_ingest(reports)
    second = crash_reports_ingest(reports)
    assert (first.inserted, second.inserted, second.duplicates) == (7, 0, 7)
    assert CrashReport.objects.count() == 7
    assert CrashCounter.objects.get().count == 7
    stat = BucketVersionStat.objects.get()
    assert (stat.reports, stat.systems) == (7, 3)


def test_a_batch_finds_its_buckets_in_one_statement_however_many_it_brings(ingest_path):
    """Thousands of signatures a batch: as one array parameter, not a parameter each (which
    psycopg splices into the text one by one, a fifth of a batch's time)."""
    if ingest_path == "portable":
        pytest.skip("SQLite's IN list is the portable path's")
    publications_sync(ListSource([record()]), now=T0)

    def bucket_lookups(count: int) -> list[str]:
        reports = [crash(n, external_id=f"{count}-{n}", signature=f"/b:{n}") for n in range(count)]
        sent: list[str] = []

        def keep(execute, sql, params, many, context):
            sent.append(sql)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(keep):
            crash_reports_ingest(reports)
        return [sql for sql in sent if sql.startswith('SELECT "overview_errorbucket"')]

    few, many = bucket_lookups(3), bucket_lookups(300)
    assert len(few) == len(many) == 2  # the known ones, then the ones just made
    assert many == few


def sent_by(records: list[CrashReportRecord]) -> tuple[ingest.IngestSummary, list[str]]:
    """The ingest of these records, and the statements it sent on this connection."""
    sent: list[str] = []

    def keep(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        return crash_reports_ingest(records), sent


def test_an_ingest_asks_for_a_bucket_or_a_package_once_not_once_a_batch(monkeypatch):
    publications_sync(ListSource([record()]), now=T0)
    monkeypatch.setattr(ingest, "BATCH", 4)

    summary, sent = sent_by([crash(n, signature=f"/b:{n % 2}") for n in range(12)])

    assert summary.inserted == 12
    asked = [
        sql
        for sql in sent
        if sql.startswith(('SELECT "overview_errorbucket"', 'SELECT "packages_sourcepackage"'))
    ]
    # The first of three batches finds its package, then its buckets (and makes them);
    # the two after it know them all.
    assert len(asked) == 3
    assert BucketVersionStat.objects.count() == 2


def test_an_ingest_asks_the_catalogue_for_a_days_partition_once_not_once_a_window(
    monkeypatch, ingest_path
):
    if ingest_path == "portable":
        pytest.skip("partitions are PostgreSQL's")
    publications_sync(ListSource([record()]), now=T0)
    monkeypatch.setattr(ingest, "BATCH", 4)

    _, sent = sent_by([crash(n) for n in range(12)])

    assert sum("pg_partitioned_table" in sql for sql in sent) == 1


def test_a_batch_the_database_refuses_teaches_the_ingest_no_id_it_rolled_back(
    monkeypatch, ingest_path
):
    publications_sync(ListSource([record()]), now=T0)
    known = ingest_store.KnownIds()
    name = "ingest_batch_sql" if ingest_path == "native" else "ingest_batch_portable"

    def refused(*args, **kwargs):
        raise OperationalError("the disk is full")

    monkeypatch.setattr(ingest_store, name, refused)
    skipped: list[str] = []
    stored = ingest_store.batch_store(
        [crash(1, signature="/new:1")],
        {"noble": noble_id()},
        {},
        skip=lambda record, why: skipped.append(why),
        known=known,
    )

    assert (stored, len(skipped)) == (0, 1)
    assert known.buckets == {} and known.packages == {}


def noble_id() -> int:
    from packages.models import Release

    return Release.objects.get(codename="noble").id


def test_a_system_is_keyed_by_the_ingest_as_by_the_model_so_it_is_never_counted_twice():
    """The ingest computes a system's key in SQL (SYSTEM_KEY_SQL), the model in Python
    (system_key): were they to differ, a system saved one way and seen the other would
    be a second system of its bucket."""
    publications_sync(ListSource([record()]), now=T0)
    systems = ["s0", "machine-ü-\u00e9", "x" * 64, "y" * 80]
    crash_reports_ingest([crash(n, system_id=system) for n, system in enumerate(systems)])
    crash_reports_ingest([crash(10 + n, system_id=system) for n, system in enumerate(systems)])
    rows = list(BucketSystem.objects.all())
    assert len(rows) == len(systems)
    for row in rows:
        assert row.key == system_key(
            row.release_id, row.source_package_id, row.version, row.system_id
        )
    assert BucketVersionStat.objects.get().systems == len(systems)


def test_reports_from_automated_testing_and_proposed_are_kept_but_not_counted():
    publications_sync(ListSource([record()]), now=T0)
    crash_reports_ingest([crash(1), crash(2, automated_testing=True), crash(3, from_proposed=True)])
    assert CrashReport.objects.count() == 3
    assert CrashCounter.objects.get().count == 1


def test_malformed_reports_are_logged_and_skipped(caplog):
    publications_sync(ListSource([record()]), now=T0)
    summary = crash_reports_ingest(
        [
            crash(1),
            crash(2, release="nowhere"),
            replace(crash(3), reported_at=T0.replace(tzinfo=None)),
        ]
    )
    assert (summary.inserted, summary.skipped) == (1, 2)
    assert "unknown release 'nowhere'" in caplog.text


@pytest.mark.parametrize(
    "poison",
    [
        {"stack_trace": "#0 crash\x00 ()"},
        {"function": "crash\x00"},
        {"environment": {"CMDLINE": "tool\x00"}},
        {"package_versions": {"libc6\x00": "2.39"}},
        {"source_package": "evil/name"},
        {"source_package": "a" * 201},
        {"web_link": "https://errors.example/" + "x" * 1000},
        {"reported_at": T0.replace(year=9999)},
        {"external_id": "r2" + "x" * 99},
        {"architecture": "amd64" * 5},
        # A lone surrogate: Python's JSON accepts it, no database driver can send it.
        {"stack_trace": "#0 crash\ud800 ()"},
        {"signature": "/usr/bin/apport:\ud800"},
        {"environment": {"CMDLINE": "tool\udfff"}},
    ],
    ids=lambda poison: next(iter(poison)),
)
def test_one_bad_record_is_skipped_alone_and_the_rest_of_its_batch_is_kept(poison, caplog):
    publications_sync(ListSource([record()]), now=T0)
    batch = [crash(1), crash(2, **poison), crash(3)]

    summary = crash_reports_ingest(batch)

    assert (summary.inserted, summary.skipped) == (2, 1)
    assert set(CrashReport.objects.values_list("external_id", flat=True)) == {"r1", "r3"}
    assert "skipped crash report 'r2" in caplog.text  # the record is named in the log
    assert summary.errors and summary.errors[0].startswith("skipped crash report 'r2")
    # The feed sends it again: the batch is still stored, the bad record still skipped.
    again = crash_reports_ingest(batch)
    assert (again.inserted, again.duplicates, again.skipped) == (0, 2, 1)


def test_a_record_the_database_refuses_is_skipped_alone_even_if_no_check_foresaw_it(
    monkeypatch, caplog
):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite stores a NUL byte: there is nothing for it to refuse")
    publications_sync(ListSource([record()]), now=T0)
    monkeypatch.setattr(
        ingest_checks, "_valid", lambda record, releases, now, names: ("", None)
    )  # no checks at all
    summary = crash_reports_ingest([crash(1), crash(2, stack_trace="nul\x00"), crash(3)])
    assert (summary.inserted, summary.skipped) == (2, 1)
    assert "the database refused it" in caplog.text
    assert CrashCounter.objects.get().count == 2


def test_a_record_the_driver_cannot_encode_is_skipped_alone_even_if_no_check_foresaw_it(
    monkeypatch, caplog
):
    publications_sync(ListSource([record()]), now=T0)
    monkeypatch.setattr(
        ingest_checks, "_valid", lambda record, releases, now, names: ("", None)
    )  # no checks at all
    batch = [crash(n) for n in range(1, 30)] + [crash(30, stack_trace="#0 \ud800 ()")]

    summary = crash_reports_ingest(batch)

    assert (summary.inserted, summary.skipped) == (29, 1)
    assert "skipped crash report 'r30'" in caplog.text


def test_a_batch_that_lost_a_deadlock_to_another_ingest_is_stored_again_whole(monkeypatch, caplog):
    from psycopg import errors

    publications_sync(ListSource([record()]), now=T0)
    store, calls = ingest_store._store_batch, []

    def losing_once(records, *rest):
        calls.append(len(records))
        if len(calls) == 1:  # as Django raises what PostgreSQL said
            raise OperationalError("deadlock detected") from errors.DeadlockDetected()
        return store(records, *rest)

    monkeypatch.setattr(ingest_store, "_store_batch", losing_once)

    summary = crash_reports_ingest([crash(n) for n in range(5)])

    assert (summary.inserted, summary.skipped) == (5, 0)
    assert calls == [5, 5]  # the batch again, not its reports one by one
    assert "one by one" not in caplog.text


def test_a_report_that_keeps_losing_races_fails_the_ingest_rather_than_being_skipped(
    monkeypatch, caplog
):
    from psycopg import errors

    publications_sync(ListSource([record()]), now=T0)

    def always_losing(*batch):
        raise OperationalError("deadlock detected") from errors.DeadlockDetected()

    monkeypatch.setattr(ingest_store, "_store_batch", always_losing)

    # Nothing is wrong with the reports: the sync fails, is recorded so, and asks again.
    with pytest.raises(OperationalError):
        crash_reports_ingest([crash(n) for n in range(3)])
    assert "refused" not in caplog.text


def test_a_link_from_the_feed_that_is_not_http_is_dropped_and_the_report_kept():
    publications_sync(ListSource([record()]), now=T0)
    crash_reports_ingest([crash(1, web_link="javascript:alert(1)")])
    report = CrashReport.objects.get()
    assert report.bucket.web_link == ""


def test_install_failures_count_in_their_bucket_but_not_in_the_daily_crash_counts():
    publications_sync(ListSource([record()]), now=T0)
    failure = "package:apport:2.0-1ubuntu0.1:installed post-installation script failed"
    crash_reports_ingest(
        [
            crash(1),
            crash(2, signature=failure, problem_type="Package"),
            crash(3, signature=failure, problem_type="Package"),
        ]
    )
    assert CrashCounter.objects.get().count == 1  # the crash rate counts crashes
    stat = BucketVersionStat.objects.get(bucket__signature=failure)
    assert (stat.reports, stat.systems, stat.bucket.problem_type) == (2, 2, "package")


def _counted_as_defined() -> tuple[dict, dict]:
    """The judges' hourly counts as their definition states them, from the stored reports:
    crash events (a machine once per bucket and hour) and reports per version and hour,
    install failures, automated testing and -proposed left out; and the machines seen per
    binary version and hour through other packages' reports."""
    hourly: dict[tuple, tuple[set, int]] = defaultdict(lambda: (set(), 0))
    sightings: dict[tuple, set] = defaultdict(set)
    own = {"apport": {"apport", "python3-apport"}}
    for r in CrashReport.objects.select_related("bucket", "source_package"):
        if r.automated_testing or r.from_proposed:
            continue
        hour = r.reported_at.replace(minute=0, second=0, microsecond=0)
        if r.bucket.problem_type != "package":
            key = (r.source_package.name, r.version, hour)
            events, reports = hourly[key]
            hourly[key] = (events | {(r.system_id, r.bucket_id)}, reports + 1)
        for binary, version in r.package_versions.items():
            if binary not in own.get(r.source_package.name, ()):
                sightings[(binary, version, hour)].add(r.system_id)
    return (
        {k: (len(events), reports) for k, (events, reports) in hourly.items()},
        {k: len(machines) for k, machines in sightings.items()},
    )


def glibc_update():
    """A library in phasing: glibc 2.40, replacing 2.39, building libc6 and libc-bin."""
    return record(
        source_package="glibc",
        version="2.40",
        previous_version="2.39",
        binaries=("libc6", "libc-bin"),
    )


def _counted_by_the_ingest() -> tuple[dict, dict]:
    hourly = {
        (c.source_package.name, c.version, c.hour): (c.events, c.reports)
        for c in HourlyCrashCount.objects.select_related("source_package")
    }
    sightings = {
        (s.binary, s.version, s.hour): s.machines
        for s in VersionSighting.objects.all()
        if s.machines
    }
    return hourly, sightings


def _dependents_counted_by_the_ingest() -> dict:
    return {
        (c.dependent.name, c.dependent_version, c.hour): (c.on_new, c.on_old)
        for c in DependentCrashCount.objects.select_related("dependent")
        if c.on_new or c.on_old
    }


def _dependents_counted_as_defined(library: str, binaries: set[str], new: str, old: str) -> dict:
    """The library's dependents' crash counts as defined, from the stored reports: per
    dependent, its version and hour, the machines (once per bucket) whose counted report
    lists one of the library's binaries at its new version, and at its old one."""
    counted: dict[tuple, tuple[set, set]] = defaultdict(lambda: (set(), set()))
    for r in CrashReport.objects.select_related("source_package"):
        if r.automated_testing or r.from_proposed or r.source_package.name == library:
            continue
        hour = r.reported_at.replace(minute=0, second=0, microsecond=0)
        versions = {v for b, v in r.package_versions.items() if b in binaries}
        on_new, on_old = counted[(r.source_package.name, r.version, hour)]
        if new in versions:
            on_new.add((r.system_id, r.bucket_id))
        if old in versions:
            on_old.add((r.system_id, r.bucket_id))
    return {k: (len(n), len(o)) for k, (n, o) in counted.items() if n or o}


@pytest.mark.parametrize("seed", [1, 2])
def test_hourly_counts_kept_batch_by_batch_are_what_the_stored_reports_say(monkeypatch, seed):
    """The ingest adds to the judges' hourly counts batch by batch (it never recounts an
    hour): whatever the batches, a machine counts once per bucket and hour and once per
    binary version and hour, and reports sent again count once. So do the dependents'
    counts of a library in phasing, by the library's version on the machine."""
    publications_sync(
        ListSource(
            [
                record(binaries=("apport", "python3-apport")),
                record(source_package="gdm3"),
                glibc_update(),
            ]
        ),
        now=T0,
    )
    monkeypatch.setattr(ingest, "BATCH", 7)  # many batches, so hours span several of them
    rng = random.Random(seed)
    failure = "package:apport:2.0-1ubuntu0.1:installed post-installation script failed"
    drawn = [
        crash(
            n,
            source_package=rng.choice(["apport", "gdm3"]),
            signature=rng.choice(["/usr/bin/apport:11:crash", "/usr/bin/apport:6:abort", failure]),
            problem_type="",
            reported_at=T0 - timedelta(minutes=rng.randrange(4 * 60)),
            system_id=f"s{rng.randrange(6)}",
            package_versions=rng.choice(
                [
                    {},
                    {"libc6": "2.39"},
                    {"libc6": "2.40", "apport": "2.0"},
                    {"python3-apport": "2"},
                    {"libc6": "2.40", "libc-bin": "2.39"},
                ]
            ),
            from_proposed=rng.random() < 0.1,
            automated_testing=rng.random() < 0.1,
        )
        for n in range(120)
    ]
    sent_again = rng.sample(drawn, 30)

    crash_reports_ingest(drawn[:60])
    crash_reports_ingest(sent_again + drawn[60:])

    assert _counted_by_the_ingest() == _counted_as_defined()
    dependents = _dependents_counted_as_defined("glibc", {"libc6", "libc-bin"}, "2.40", "2.39")
    assert dependents  # the draw has some
    assert _dependents_counted_by_the_ingest() == dependents


def test_a_library_binary_that_its_dependent_once_built_still_counts_for_the_library():
    """Binaries move between source packages (libc-bin from apport's old publication to
    glibc's here): a dependent's report listing one counts for the library that builds it
    now, and a library's own reports never count for it."""
    publications_sync(
        ListSource(
            [
                record(
                    version="1.0",
                    binaries=("apport", "libc-bin"),
                    date_published=T0 - timedelta(days=1),
                ),
                record(binaries=("apport",)),
                glibc_update(),
            ]
        ),
        now=T0,
    )

    crash_reports_ingest(
        [
            crash(1, package_versions={"libc-bin": "2.40"}),
            crash(2, package_versions={"libc-bin": "2.39"}, system_id="other"),
            crash(3, source_package="glibc", version="2.40", package_versions={"libc6": "2.40"}),
        ]
    )

    hour = T0.replace(minute=0)
    assert _dependents_counted_by_the_ingest() == {("apport", "2.0-1ubuntu0.1", hour): (1, 1)}
