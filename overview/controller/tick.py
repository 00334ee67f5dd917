"""The phasing controller: one tick advances, holds or halts every update in phasing.

The rules are those of docs/architecture.md ("The controller"), in this order for each
publication in phasing, paused or halted:

1. Crash data could not be fetched: hold, record since when. Never advance blind.
2. A problem that no live override covers: dial to 0%, halt, email signer, uploader
   and sponsor once.
3. Paused by a person, or halted: hold. Only a person lifts either.
4. Release frozen: hold.
5. Policy: one step when the last increase is at least one interval old (one step per
   tick, so catching up after downtime never jumps), unless the policy wants more data
   first, holds at a gate while the evidence is insufficient, or the quiet weekend
   forbids reaching 100%.
6. At 100%: complete.

Problems come from the crash source (a bucket new in this version, by Ubuntu's rule) and
from the policy's judge of the crash rate: Ubuntu's rules as the source applies them, or
the sequential test over the crash data held locally (overview.judges.pipeline), which also gives
every update a verdict and its evidence (overview.judges.verdicts), written each tick.
Under the sequential judge a third kind: the update's dependents crash more on machines
that have it (overview.judges.dependents).

A tick goes one release at a time. Crash data is fetched before the release's
transaction (it may be HTTP); the decisions are taken and written in one short transaction
over rows locked with SELECT ... FOR UPDATE, so a second tick at the same time waits, then
sees the first one's result and does nothing twice. The number of queries does not grow
with the number of publications (a fixed number per release).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import replace
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from overview.controller import together
from overview.controller.assessments import assessments_record
from overview.controller.notifications import halt_notifications_create
from overview.controller.outcomes import (
    TickOutcome,
    failed,
    hold_outcome,
    label_of,
    outcome_of,
)
from overview.controller.problems import problems_record_each
from overview.controller.rule import Action
from overview.evidence.sources.base import (
    CrashAnswer,
    CrashQuery,
    CrashSource,
    checked,
    unavailable,
)
from overview.judges import dependents, verdicts
from overview.judges import pipeline as judging
from overview.judges.crash_source import crash_source as configured_crash_source
from overview.models import Verdict
from packages.collector import collector_paused
from packages.domain import policy as policy_rules
from packages.holds import HoldReason
from packages.models import (
    ACTIVE_STATES,
    EventKind,
    PhasingState,
    Pocket,
    Publication,
)
from packages.selectors import policies_by_scope
from packages.services.announcements import DATA_STALE, announce
from packages.services.changes import Change
from packages.services.phasing import (
    HOLD_FIELDS,
    publications_apply,
    publications_hold,
)

log = logging.getLogger(__name__)


def _query(publication: Publication) -> CrashQuery:
    # A halted update still runs on the machines that took it before the halt: its crash
    # rate is scaled by that share, never by 0% (packages.models.percentage_before_halt).
    share = publication.phased_update_percentage
    if publication.state == PhasingState.HALTED and publication.percentage_before_halt:
        share = publication.percentage_before_halt
    return CrashQuery(
        release=publication.release.codename,
        source_package=publication.source_package.name,
        version=publication.version,
        previous_version=publication.previous_version,
        percentage=share,
        date_published=publication.date_published,
    )


def _fetch_answers(
    source: CrashSource, queries: list[CrashQuery], now: datetime
) -> dict[CrashQuery, CrashAnswer]:
    try:
        answers = source.problems(queries, now=now)
    except Exception as exc:  # one broken source must not stop the tick: every update holds
        name = getattr(source, "name", source)
        log.exception("crash source %s failed", name, extra={"source": name})
        return {q: unavailable(exc) for q in queries}
    return {q: checked(answers.get(q) or unavailable("no answer")) for q in queries}


def _in_phasing() -> QuerySet[Publication]:
    return Publication.objects.filter(state__in=ACTIVE_STATES, pocket=Pocket.UPDATES)


def releases_in_phasing() -> list[int]:
    """The releases that have updates in phasing: one tick task each (tasks.tick_release)."""
    return sorted(set(_in_phasing().values_list("release_id", flat=True)))


def tick(
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    crash_source: CrashSource | None = None,
    releases: Collection[int] | None = None,
) -> list[TickOutcome]:
    """Run one controller tick at `now`; with dry_run, decide and report but change nothing.

    `releases` (ids): the updates of these releases only. A tick decides one release at a
    time, each in its own short transaction: nothing a decision reads crosses a release
    (dependencies are between binaries of one release, the judge's belief about uptake is
    pooled per release), so this decides every update as deciding them all at once would,
    while the tick holds one release's updates in memory, not the archive's (20,000 updates
    across releases). The ticks of different releases can therefore also run at once, on
    different workers (tasks.tick_release), each locking only its own release's rows.
    """
    # Days, "today" and the quiet weekend are UTC, whatever offset the caller used.
    now = (now or timezone.now()).astimezone(UTC)
    source = crash_source or configured_crash_source()
    chosen = releases_in_phasing() if releases is None else sorted(releases)
    outcomes: list[TickOutcome] = []
    for release in chosen:
        with collector_paused():
            outcomes += _tick_release(release, now=now, dry_run=dry_run, source=source)
    return outcomes


def _tick_release(
    release: int, *, now: datetime, dry_run: bool, source: CrashSource
) -> list[TickOutcome]:
    in_phasing = _in_phasing().filter(release_id=release)
    # The judges read the binaries and the controller the relations (together): never the
    # bugs a changelog closes or the sources' percentages, the tick's largest columns after.
    candidates = list(
        _with_digest(
            in_phasing.select_related("release", "source_package").defer(
                "closed_bugs", "source_percentages"
            )
        )
    )
    if not candidates:
        return []
    queries = {p.pk: _query(p) for p in candidates}
    answers = _fetch_answers(source, list(dict.fromkeys(queries.values())), now)
    judgements, judge_failures = verdicts.judgements_of(candidates, source, now)
    # Library regressions: the dependents' crashes with and without each update, when
    # the crash data are held here (overview.judges.dependents).
    found, failed = dependents.judgements_of(
        [p for p in candidates if p.pk in judgements or p.pk in judge_failures],
        test=judging.judge_settings(),
        now=now,
    )
    judge_failures = {**failed, **judge_failures}
    needs = together.tick_needs(candidates)

    with transaction.atomic():
        locked = _locked(candidates, in_phasing)
        decisions = _decide_all(
            locked,
            queries,
            answers,
            judgements,
            needs,
            now=now,
            judge_failures=judge_failures,
            dependents_found=found,
        )
        if dry_run:
            transaction.set_rollback(True)
    return decisions


_TABLE = Publication._meta.db_table
# What a decision reads of a row it has locked: every column the candidates were read with.
_LOCKED = [
    field.attname
    for field in Publication._meta.concrete_fields
    if field.name not in ("closed_bugs", "source_percentages")
]


def _row_digest() -> RawSQL | None:
    """On PostgreSQL, an md5 of the whole row as text: equal digests, equal rows, so the
    lock need not bring back a row nobody changed (None elsewhere)."""
    if connection.vendor != "postgresql":
        return None
    # The model's own table name, no input: nothing to inject.
    return RawSQL(f'md5("{_TABLE}"::text)', ())  # noqa: S611


def _with_digest(publications: QuerySet[Publication]) -> QuerySet[Publication]:
    digest = _row_digest()
    return publications if digest is None else publications.annotate(row_digest=digest)


def _locked(candidates: list[Publication], in_phasing: QuerySet[Publication]) -> list[Publication]:
    """The candidates still in phasing, locked (SELECT ... FOR UPDATE) and brought up to
    date with their rows as locked, so a person's change since the candidates were read is
    what the tick decides on; in id order. The rows come back as values onto the
    candidates' instances, rather than as 20,000 new instances with their relations: a
    changed reference drops its cached object (Django), which is read again if needed. On
    PostgreSQL the lock reads each row's digest only, and the rows whose digest moved."""
    by_pk = {p.pk: p for p in candidates}
    locking = in_phasing.select_for_update(of=("self",)).order_by("pk")
    digest = _row_digest()
    if digest is not None:
        digests = list(locking.values_list("pk", digest))
        ids = [pk for pk, _ in digests]
        read = {pk: p.row_digest for pk, p in by_pk.items()}  # type: ignore[attr-defined]
        moved = [pk for pk, now in digests if pk in read and read[pk] != now]
        rows = (
            list(Publication.objects.filter(pk__any=moved).values_list(*_LOCKED)) if moved else []
        )
    else:
        rows = list(locking.values_list(*_LOCKED))
        ids = [row[0] for row in rows]
    for row in rows:
        publication = by_pk.get(row[0])
        if publication is None:
            continue
        for name, value in zip(_LOCKED, row, strict=True):
            setattr(publication, name, value)
    # A row that entered phasing since the candidates were read is the next tick's.
    return [by_pk[pk] for pk in ids if pk in by_pk]


def _decide_all(
    publications: list[Publication],
    queries: dict[int, CrashQuery],
    answers: dict[CrashQuery, CrashAnswer],
    judgements: dict[int, judging.Judgement],
    needs: dict[int, list[together.Need]],
    *,
    now: datetime,
    judge_failures: dict[int, str] | None = None,
    dependents_found: dict[int, dependents.DependentsJudgement] | None = None,
) -> list[TickOutcome]:
    policies = policies_by_scope()
    judge_failures = judge_failures or {}
    dependents_found = dependents_found or {}
    alpha = judging.judge_settings().alpha
    rules_of = {p.pk: policy_rules.resolve_for(policies, p) for p in publications}
    judged = {
        p.pk: dependents.with_problem(
            verdicts.rate_answer(
                answers[queries[p.pk]],
                rules_of[p.pk],
                judgements.get(p.pk),
                failed=p.pk in judge_failures,
            ),
            rules_of[p.pk],
            dependents_found.get(p.pk),
            alpha=alpha,
        )
        for p in publications
        if p.pk in queries
    }
    problems, unrecorded = problems_record_each(
        {pk: answer.problems for pk, answer in judged.items() if not answer.error}, now=now
    )

    decisions: dict[int, TickOutcome] = {}
    changes: list[tuple[Publication, Change]] = []
    holds: list[Publication] = []
    assessed = []
    for publication in publications:
        loaded = _hold_fields(publication)
        answer = judged.get(publication.pk) or CrashAnswer(error="not queried")
        rules = rules_of[publication.pk]
        judgement = judgements.get(publication.pk)
        found = problems.get(publication.pk, [])
        verdict, evidence = verdicts.verdict_of(rules=rules, judgement=judgement, problems=found)
        failure = judge_failures.get(publication.pk, "")
        if rules.judge != policy_rules.SEQUENTIAL:
            failure = ""  # the test is only evidence there: Ubuntu's rules still judge
        elif failure:
            verdict, evidence = Verdict.INSUFFICIENT, failure
        try:
            if publication.pk in unrecorded:
                raise unrecorded[publication.pk]
            decision, change, _ = outcome_of(
                publication, rules, answer, found, (verdict, evidence), now, judge_error=failure
            )
        except Exception as exc:  # one broken publication never stops the tick for the others
            log.exception(
                "controller could not decide for %s",
                label_of(publication),
                extra={"publication": label_of(publication)},
            )
            decisions[publication.pk] = failed(publication, exc)
            holds.append(publication)
            continue
        decisions[publication.pk] = decision
        if not answer.error:
            assessed.append(
                verdicts.assessment_row(
                    publication,
                    rules=rules,
                    judgement=judgement,
                    verdict=verdict,
                    evidence=evidence,
                    halted=decision.action == Action.HALT
                    or publication.state == PhasingState.HALTED,
                    averted_days=settings.PHASING_AVERTED_DAYS,
                    now=now,
                )
            )
        if change is not None:
            changes.append((publication, change))
        elif _hold_fields(publication) != loaded:
            holds.append(publication)

    _hold_together(publications, changes, holds, decisions, needs, rules_of)

    def refused(publication: Publication, exc: Exception) -> None:
        log.warning("controller could not change %s: %s", label_of(publication), exc)
        decisions[publication.pk] = failed(publication, exc)
        holds.append(publication)

    events = publications_apply(changes, now=now, on_error=refused)
    publications_hold(holds)
    assessments_record(assessed)
    halted = [(e.publication, e) for e in events if e.kind == EventKind.HALTED]
    halt_notifications_create(halted, now=now)
    # Crash data that went missing at this tick (the date is this tick's): one notice.
    stale = [(p.pk, "stale") for p in publications if p.crash_data_unavailable_since == now]
    announce(DATA_STALE, stale)
    return list(decisions.values())


def _hold_together(
    publications: list[Publication],
    changes: list[tuple[Publication, Change]],
    holds: list[Publication],
    decisions: dict[int, TickOutcome],
    needs: dict[int, list[together.Need]],
    rules_of: dict[int, policy_rules.Rules],
) -> None:
    """Cap what this tick raises at what the updates it needs reach (overview.controller.together);
    `changes`, `holds` and `decisions` are changed in place."""
    if not needs:
        return
    before = {p.pk: c for p, c in changes}
    capped, held = together.cap(publications, changes, needs, rules_of)
    by_pk = {p.pk: p for p in publications}
    for pk, (_, detail) in held.items():
        decisions[pk] = hold_outcome(by_pk[pk], HoldReason.DEPENDENCY, detail)[0]
        holds.append(by_pk[pk])
    for publication, change in capped:
        if change is not before[publication.pk]:
            old = decisions[publication.pk]
            decisions[publication.pk] = replace(
                old,
                action=Action.COMPLETE if change.kind == EventKind.COMPLETED else Action.ADVANCE,
                new_percentage=change.percentage or old.new_percentage,
                detail=change.reason,
            )
    changes[:] = capped


def _hold_fields(publication: Publication) -> tuple[object, ...]:
    return tuple(getattr(publication, name) for name in HOLD_FIELDS)
