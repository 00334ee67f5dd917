"""Skipping an update whose evidence stamp is unchanged decides as reading and judging it
again would.

Histories are generated (Hypothesis): crash rates, volumes, percentages, then what happens
between two ticks (nothing, new crash hours, a person's change of percentage, an hour
passing, machines seen with an update's binary in another package's reports, which moves
the release's pooled belief, a late report of a past hour of another package, which moves
what every update's deficit is measured against, a fleet report). The second tick with
reuse must give the decisions and judgements of a tick that reads and judges every update
afresh, and must neither read nor judge an update whose evidence did not change.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.db import transaction
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from overview.controller import tick as controller
from overview.evidence.ingest import crash_reports_ingest
from overview.judges import pipeline as judging
from overview.judges import reads
from overview.judges.local import LocalCrashSource
from overview.models import Assessment, FleetReport
from packages.models import Publication
from tests.factories import PublicationFactory, SourcePackageFactory
from tests.overview.judges.test_pipeline import HOUR, NEW, OLD, T0, crashes, report

pytestmark = [pytest.mark.django_db]


def updates(percentages: list[int]) -> list[Publication]:
    made = []
    for n, percentage in enumerate(percentages):
        made.append(
            PublicationFactory(
                source_package=SourcePackageFactory(name=f"tool{n}"),
                version=NEW,
                previous_version=OLD,
                binaries=[f"tool{n}"],
                date_published=T0 - 24 * HOUR,
                last_increase_at=T0 - 24 * HOUR,
                phased_update_percentage=percentage,
            )
        )
    return made


def history(publications, ratios, per_hour, seed):
    records = []
    for n, (publication, ratio) in enumerate(zip(publications, ratios, strict=True)):
        for r in crashes(ratio=ratio, per_hour=per_hour, seed=seed + n):
            records.append(
                report(
                    f"{publication.source_package.name}-{r.external_id}",
                    r.version,
                    r.reported_at,
                    f"{publication.source_package.name}/{r.system_id}",
                    package=publication.source_package.name,
                )
            )
    crash_reports_ingest(records, now=T0)


def judged(now, *, reuse: bool, settings):
    settings.PHASING_JUDGEMENT_REUSE = reuse
    decisions = controller.tick(now=now, dry_run=True, crash_source=LocalCrashSource())
    publications = list(Publication.objects.order_by("pk"))
    judgements = judging.publications_judge(publications, now=now)
    return sorted(map(repr, decisions)), {pk: repr(j) for pk, j in judgements.items()}


@hypothesis_settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    percentages=st.lists(st.sampled_from([10, 25, 50, 100]), min_size=1, max_size=3),
    ratios=st.lists(st.sampled_from([0.5, 1.0, 2.0, 4.0]), min_size=3, max_size=3),
    per_hour=st.sampled_from([2, 6, 15]),
    seed=st.integers(0, 1000),
    between=st.sampled_from(
        [
            "nothing",
            "new crash hour",
            "a person's change",
            "an hour",
            "new sightings",
            "a late report",
            "a fleet report",
        ]
    ),
)
def test_a_reused_judgement_decides_as_judging_again_would(
    reuse_on, settings, percentages, ratios, per_hour, seed, between
):
    with transaction.atomic():
        cache.clear()
        publications = updates(percentages)
        history(publications, ratios[: len(publications)], per_hour, seed)
        now = T0 + timedelta(minutes=5)
        judged(now, reuse=True, settings=settings)  # the first tick keeps its judgements
        first_binary = publications[0].binaries[0]
        if between == "new crash hour":
            first = publications[0].source_package.name
            crash_reports_ingest(
                [
                    report(f"late-{k}", NEW, T0 + timedelta(minutes=1), f"late/{k}", package=first)
                    for k in range(5)
                ],
                now=now,
            )
        elif between == "a person's change":
            Publication.objects.filter(pk=publications[0].pk).update(
                phased_update_percentage=100 if percentages[0] != 100 else 10
            )
        elif between == "an hour":
            now += HOUR
        elif between == "new sightings":
            # Another package's crashes list the first update's binary: machines seen on it.
            crash_reports_ingest(
                [
                    report(
                        f"seen-{k}",
                        "1.0",
                        T0 + timedelta(minutes=2),
                        f"seen/{k}",
                        package="bystander",
                        versions={first_binary: NEW if k % 2 else OLD},
                    )
                    for k in range(6)
                ],
                now=now,
            )
        elif between == "a late report":
            crash_reports_ingest(
                [report("late-past", "1.0", T0 - 3 * HOUR, "late/past", package="bystander")],
                now=now,
            )
        elif between == "a fleet report":
            FleetReport.objects.create(
                machine="m1",
                publication=publications[0],
                installed_version=NEW,
                on_new_version=True,
                reported_at=T0 + timedelta(minutes=3),
                day=T0.date(),
            )

        again = judged(now, reuse=True, settings=settings)
        afresh = judged(now, reuse=False, settings=settings)

        assert again == afresh
        transaction.set_rollback(True)


def test_an_unchanged_update_is_not_judged_again_and_a_changed_one_is(
    reuse_on, settings, monkeypatch
):
    publications = updates([50, 50])
    history(publications, [1.0, 3.0], 10, seed=7)
    now = T0 + timedelta(minutes=5)
    calls = []
    real = judging._judge
    monkeypatch.setattr(
        judging, "_judge", lambda p, *a, **k: calls.append(p.pk) or real(p, *a, **k)
    )

    judging.publications_judge(publications, now=now)
    judging.publications_judge(publications, now=now + timedelta(minutes=5))
    assert sorted(calls) == sorted(p.pk for p in publications)  # the second tick reused both

    calls.clear()
    crash_reports_ingest(
        [report("late", NEW, T0 + timedelta(minutes=2), "late/1", package="tool1")], now=now
    )
    judging.publications_judge(publications, now=now + timedelta(minutes=10))
    assert publications[1].pk in calls  # its new crash hour is judged


@pytest.fixture
def read(monkeypatch) -> list[int]:
    """The ids of the updates whose hourly counts the judge reads, in order."""
    read: list[int] = []
    real = reads.hourly_counts
    monkeypatch.setattr(
        reads,
        "hourly_counts",
        lambda ps, **k: read.extend(p.pk for p in ps) or real(ps, **k),
    )
    return read


def test_an_unchanged_update_is_not_read_again_and_a_changed_one_is(reuse_on, read):
    publications = updates([50, 50])
    history(publications, [1.0, 1.0], 10, seed=3)
    now = T0 + timedelta(minutes=5)

    judging.publications_judge(publications, now=now)
    read.clear()
    judging.publications_judge(publications, now=now + timedelta(minutes=5))
    assert read == []  # nothing changed: neither update's counts are read

    crash_reports_ingest(
        [report("new", NEW, T0 + timedelta(minutes=6), "new/1", package="tool0")], now=now
    )
    judging.publications_judge(publications, now=now + timedelta(minutes=10))
    assert read == [publications[0].pk]  # only the update with a new crash is read


def test_a_tick_rewrites_only_the_assessments_that_changed(reuse_on):
    publications = updates([50, 50])
    history(publications, [1.0, 1.0], 10, seed=5)
    Publication.objects.update(last_increase_at=T0)  # no step due: both updates hold
    now = T0 + timedelta(minutes=5)
    controller.tick(now=now, crash_source=LocalCrashSource())
    crash_reports_ingest(
        [report("new", NEW, T0 + timedelta(minutes=6), "new/1", package="tool1")], now=now
    )

    later = now + timedelta(minutes=5)
    controller.tick(now=later, crash_source=LocalCrashSource())

    assessed = dict(Assessment.objects.values_list("publication_id", "assessed_at"))
    # The first update's assessment is the one the first tick found; the second's changed.
    assert assessed == {publications[0].pk: now, publications[1].pk: later}
    assert Assessment.objects.get(publication=publications[1]).crashes_new > 0


def test_machines_seen_on_one_update_move_its_release_belief_and_every_update_is_read(
    reuse_on, read
):
    publications = updates([50, 50])
    history(publications, [1.0, 1.0], 10, seed=3)
    now = T0 + timedelta(minutes=5)
    judging.publications_judge(publications, now=now)
    read.clear()

    crash_reports_ingest(
        [
            report(
                f"seen-{k}",
                "1.0",
                T0 + timedelta(minutes=6),
                f"seen/{k}",
                package="bystander",
                versions={"tool0": NEW if k % 3 else OLD},
            )
            for k in range(30)
        ],
        now=now,
    )
    judging.publications_judge(publications, now=now + timedelta(minutes=10))
    # The first update's sightings changed; the second's judgement rested on the belief
    # they moved, so it is read and judged again too.
    assert sorted(read) == sorted(p.pk for p in publications)
