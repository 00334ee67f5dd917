"""What the evidence says of an update, in words people read, from whichever judge decides.

The controller asks here, after it has recorded the update's problems: a problem no
override covers is a regression whoever found it; otherwise the sequential test's verdict
stands (healthy, or insufficient evidence with how much more it needs). An update judged
by Ubuntu's rules gets the sequential test's figures as evidence, never its halt.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from overview.evidence.sources.base import CrashAnswer, CrashSource, ProblemRecord
from overview.judges import pipeline as judging
from overview.judges import sequential
from overview.judges.pipeline import Judgement, ratio_words
from overview.models import Assessment, Problem, ProblemKind, Verdict
from packages.domain import policy
from packages.domain.change_words import plural
from packages.models import Publication
from packages.models.loading import built

SEQUENTIAL_TEST = "sequential test"

log = logging.getLogger(__name__)


def rate_problem(judgement: Judgement, *, alpha: float) -> ProblemRecord | None:
    """The sequential judge's 'increased rate' problem, when its test says regressed."""
    found = judgement.assessment
    if found.verdict != sequential.Finding.REGRESSED:
        return None
    events = plural(found.new + found.old, "crash event")
    detail = (
        f"{_rate_words(found, events)} ({found.new:,} on this version, about "
        f"{round(100 * judgement.share)}% of machines): above 1 with "
        f"{100 * (1 - alpha):.0f}% confidence ({SEQUENTIAL_TEST})"
    )
    return ProblemRecord(
        kind=ProblemKind.INCREASED_RATE,
        report_count=found.new,
        difference=round(found.lower, 3),
        detail=detail,
    )


def _rate_words(found: sequential.SequentialResult, events: str) -> str:
    """'crash rate 1.1× (likely 0.8–1.6×) the previous version's over 240 crash events', or
    '3 crash events, too few for a crash rate' (never 'crash rate no rate yet')."""
    ratio = ratio_words(found)
    if not ratio:
        return f"{events}, too few for a crash rate"
    return f"crash rate {ratio} the previous version's over {events}"


def describe_problem(problem: Problem) -> str:
    """A problem as the halt event, the email and the pages say it: the test and figures."""
    if problem.detail:
        return problem.detail
    if problem.kind == ProblemKind.DEPENDENTS:
        return (
            f"its dependents crash more with this version "
            f"({plural(problem.report_count, 'crash event')} of theirs with it)"
        )
    if problem.kind == ProblemKind.INCREASED_RATE:
        return (
            f"increased crash rate ({problem.report_count} today, "
            f"{problem.difference or 0:+.1f} over the baseline: Ubuntu's rules)"
        )
    what = (
        "new install failure"
        if problem.bucket is not None and problem.bucket.is_install_failure
        else "new bucket"
    )
    return (
        f"{what} {problem.bucket} ({plural(problem.system_count, 'system')}, "
        f"{plural(problem.report_count, 'report')})"
    )


def verdict_of(
    *,
    rules: policy.Rules,
    judgement: Judgement | None,
    problems: Sequence[Problem],
) -> tuple[str, str]:
    """(verdict, evidence in words) of one update."""
    blocking = [p for p in problems if not p.is_overridden]
    if blocking:
        return Verdict.REGRESSED, "; ".join(describe_problem(p) for p in blocking)
    if judgement is None or not judgement.comparable:
        if judgement is not None and not judgement.assessment.new + judgement.assessment.old:
            return Verdict.INSUFFICIENT, "insufficient evidence: no crash reports yet"
        return Verdict.INSUFFICIENT, "insufficient evidence: no previous version to compare with"
    found = judgement.assessment
    rate = _rate_words(found, plural(found.new + found.old, "crash event"))
    if found.verdict == sequential.Finding.HEALTHY:
        return Verdict.HEALTHY, f"{rate}: healthy"
    if found.verdict == sequential.Finding.REGRESSED:
        if rules.judge == policy.SEQUENTIAL:  # the rise is overridden by a triager
            return Verdict.INSUFFICIENT, f"{rate}: a rise a triager overrode"
        return Verdict.INSUFFICIENT, (
            f"{rate}: the sequential test sees a rise, but Ubuntu's rules judge this update"
        )
    if not found.needed:  # what the share alone suggests, the history does not bear out
        return Verdict.INSUFFICIENT, f"insufficient evidence: {rate}; a rise not yet beyond doubt"
    return Verdict.INSUFFICIENT, (
        f"insufficient evidence: {rate}; about {plural(found.needed, 'more crash event')} "
        "needed to tell a doubling"
    )


def assessment_row(
    publication: Publication,
    *,
    rules: policy.Rules,
    judgement: Judgement | None,
    verdict: str,
    evidence: str,
    halted: bool,
    averted_days: int,
    now: datetime,
) -> Assessment:
    """The Assessment row the pages read, for a bulk upsert."""
    found = judgement.assessment if judgement else None
    return built(
        Assessment,
        publication_id=publication.pk,
        judge=rules.judge,
        verdict=verdict,
        evidence=evidence[:500],
        ratio=found.ratio if found else None,
        ratio_low=found.lower if found else None,
        ratio_high=found.upper if found and math.isfinite(found.upper) else None,
        crashes_new=found.new if found else 0,
        crashes_old=found.old if found else 0,
        crashes_needed=found.needed if found else 0,
        share=judgement.share if judgement else 0.0,
        share_low=judgement.share_low if judgement else 0.0,
        share_high=judgement.share_high if judgement else 0.0,
        uptake_hours=judgement.uptake.hours if judgement else 0.0,
        sightings=judgement.uptake.sightings if judgement else 0,
        measured_hours=judgement.uptake.deficit_hours if judgement else 0,
        exposure_hours=judgement.exposure_hours if judgement else 0.0,
        averted=judgement.averted(averted_days) if judgement and halted else None,
        assessed_at=now,
    )


def judgements_of(
    candidates: list[Publication], source: CrashSource, now: datetime
) -> tuple[dict[int, Judgement], dict[int, str]]:
    """The sequential test of each update, when the crash data are held here (the error
    tracker keeps its reports to itself: then Ubuntu's rules, as the tracker applies
    them, judge every update), and why it failed for the updates it could not judge.

    A failure is never replaced by another judge: the controller holds an update whose
    policy chose the sequential test and says why (overview.controller.tick). When the test
    fails for the tick, each update is judged alone, so one bad update fails alone.
    """
    if not getattr(source, "keeps_reports", False):
        return {}, {}
    try:
        return judging.publications_judge(candidates, now=now), {}
    except Exception:
        log.exception("the sequential test could not judge this tick; judging each update alone")
    judgements: dict[int, Judgement] = {}
    failures: dict[int, str] = {}
    for publication in candidates:
        try:
            judgements.update(judging.publications_judge([publication], now=now))
        except Exception as exc:
            log.exception("the sequential test could not judge publication %s", publication.pk)
            failures[publication.pk] = f"the sequential test failed: {type(exc).__name__}: {exc}"
    return judgements, failures


def rate_answer(
    answer: CrashAnswer, rules: policy.Rules, judgement: Judgement | None, *, failed: bool = False
) -> CrashAnswer:
    """The source's answer with the crash-rate problem of the judge the policy chose.

    When the sequential test failed for an update whose policy chose it, Ubuntu's rate
    rule does not stand in: the answer keeps only its buckets, and the controller holds
    the update. A source that keeps no reports gives no judgement: then Ubuntu's rules,
    as the tracker applies them, are the only rate rule there is.
    """
    if answer.error or rules.judge != policy.SEQUENTIAL:
        return answer
    problems = [p for p in answer.problems if p.kind != ProblemKind.INCREASED_RATE]
    if failed:
        return replace(answer, problems=tuple(problems))
    if judgement is None:
        return answer
    found = rate_problem(judgement, alpha=judging.judge_settings().alpha)
    if found is not None:
        problems.append(found)
    return replace(answer, problems=tuple(problems))
