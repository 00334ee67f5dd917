"""Where the previous version has a history, the anchored and the concurrent test decide
together whether an update's crash rate rose (docs/judges.md, "Where there is a history,
both tests decide together"): the history as the anchored test's yardstick, and the mean
of the two tests' evidence. Reads nothing: overview.judges.pipeline hands it what it read.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings

from overview.judges import anchored, exposure, installs, reads, sequential
from packages.models import Publication

if TYPE_CHECKING:
    from overview.judges import pipeline


def anchor_of(
    publication: Publication,
    deficit: exposure.Deficit | None,
    counts: reads.Counts,
    reports: reads.Counts,
    *,
    start: datetime,
) -> anchored.Anchor | None:
    """The previous version's history as the anchored test's yardstick, in crash events
    (the history counts reports: scaled by the events a report makes since publication)."""
    if deficit is None or not deficit.hours:
        return None
    key = (publication.release_id, publication.source_package_id, publication.previous_version)
    moments = installs.hours_from(start, len(deficit.hours))
    events = sum(counts.get(key, {}).get(m, 0) for m in moments)
    stored = sum(reports.get(key, {}).get(m, 0) for m in moments)
    per_report = events / stored if stored else 1.0
    return anchored.Anchor(
        expected=[per_report * e for e in deficit.expected],
        spread=deficit.spread,
        level_error=deficit.level_error,
        noise=deficit.block_noise((len(deficit.hours) + 23) // 24),
        day_sums_only=deficit.relative,
    )


def judged_together(
    judgement: pipeline.Judgement,
    test: sequential.SequentialTest,
    anchor: anchored.Anchor,
    sightings: exposure.Sightings,
    belief: exposure.Uptake,
    counts: reads.Counts,
    *,
    publication: Publication,
    start: datetime,
) -> pipeline.Judgement:
    """The judgement with the anchored and the concurrent test deciding together whether
    the rate rose. Each sees rises the other cannot: the anchored test needs no share taken
    at the fast end, but its null may take any uptake, so a busy package whose history
    varies a lot from day to day (little said by the level) and whose uptake is slow
    looks to it like a healthy one taken up at once; the concurrent test, with the uptake
    measured, sees the rise in the split alone. The mean of two e-processes is one (Vovk
    and Wang 2021), so halting when the mean reaches 1/α keeps the false-halt bound."""
    key = (publication.release_id, publication.source_package_id)
    moments = installs.hours_from(start, len(anchor.expected))
    new_counts = counts.get((*key, publication.version), {})
    old_counts = counts.get((*key, publication.previous_version), {})
    found = anchored.anchored(
        test,
        new=[new_counts.get(m, 0) for m in moments],
        old=[old_counts.get(m, 0) for m in moments],
        shares=exposure.anchored_shares(
            sightings.percentages[: len(moments)], ignorers=settings.PHASING_JUDGE_IGNORERS
        ),
        log_belief=exposure.log_belief(belief),
        side=exposure.sightings_log_likelihood(sightings),
        anchor=anchor,
    )
    concurrent = judgement.assessment
    evidence = sequential.mean_evidence(concurrent.evidence, found.evidence)
    if evidence >= 1 / test.alpha:
        # The figures of the test that carries the halt (its own evidence is the larger,
        # so at least 1/α: its lower bound is above 1).
        if found.evidence >= concurrent.evidence:
            ratio, lower = found.ratio, found.lower
        else:
            ratio, lower = concurrent.ratio, concurrent.lower
        assessment = replace(
            concurrent,
            verdict=sequential.Finding.REGRESSED,
            ratio=ratio,
            lower=lower,
            evidence=evidence,
            needed=0,
        )
    else:
        verdict = concurrent.verdict
        if verdict == sequential.Finding.REGRESSED:
            verdict = sequential.Finding.INSUFFICIENT
        assessment = replace(
            concurrent,
            verdict=verdict,
            ratio=found.ratio if found.ratio is not None else concurrent.ratio,
            lower=min(concurrent.lower, 1.0),
            evidence=evidence,
        )
    return replace(judgement, assessment=assessment)
