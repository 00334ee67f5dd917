"""Words that read right: every sentence the pages, events and emails build from judge
results, holds and events, rendered for generated inputs (Hypothesis), and none has an
unfilled placeholder, a '(s)' plural, a number that disagrees with its noun, '∞', a
sentence said twice, a raw enum name or the garble of a missing value."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from overview.controller.rule import Action as Next
from overview.judges import sequential, verdicts
from overview.pages import words
from overview.pages.lines import next_words
from overview.pages.outlook import Outlook
from overview.pages.wording import outlook_lines
from packages.domain import change_words, policy
from packages.holds import HoldReason, hold_words

NOW = datetime(2026, 12, 3, 12, tzinfo=UTC)
NOUNS = ("event", "report", "system", "update", "problem", "day", "thing", "machine")
_ENUM_NAMES = {
    *(value for value in HoldReason.values if "_" in value),
    *(kind.value for kind in words.VerdictKind if "-" in kind.value),
    *(badge.value for badge in words.Badge if "-" in badge.value),
    *(attention.value for attention in words.Attention if "-" in attention.value),
    "new_bucket",
    "increased_rate",
}


def reads_right(text: str) -> None:
    """The checks every sentence passes, with the offending sentence in the message."""
    assert text == text.strip() and text, repr(text)
    for bad in ("{", "}", "%s", "%(", "(s)", "∞", "None", "nan", " inf", "no rate yet", "()"):
        assert bad not in text, f"{bad!r} in {text!r}"
    assert "  " not in text and " ," not in text and ",," not in text, text
    plain = text.replace("more ", "").replace("crash ", "").replace("overridden ", "")
    for noun in NOUNS:
        assert not re.search(rf"(?<![\d.,]){1} {noun}s\b", plain), f"'1 {noun}s' in {text!r}"
        found = re.search(rf"(?<![\d.,])(\d[\d,]*) {noun}\b", plain)
        assert not found or found.group(1) == "1", f"'{found.group(0)}' in {text!r}"
    for name in _ENUM_NAMES:
        assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (
            f"raw {name!r} in {text!r}"
        )
    parts = [p.strip() for p in re.split(r"[;:.]\s", text) if len(p.strip()) >= 8]
    assert len(parts) == len(set(parts)), f"a sentence said twice in {text!r}"


counts = st.integers(min_value=0, max_value=200_000)
shares = st.floats(min_value=0, max_value=1, allow_nan=False)
people = st.sampled_from(["", "ada", "tess", "archive-admin-2"])
reasons = st.sampled_from(["", "the rise is in the old version too", "known crash, LP: #1"])
titles = st.lists(
    st.sampled_from(["png_read_row", "increased crash rate", "install failure: dpkg"]),
    max_size=3,
).map(lambda found: [t.replace("_", " ") for t in found])


@given(
    verdict=st.sampled_from([None, "regressed", "healthy", "insufficient"]),
    judge_sequential=st.booleans(),
    blocking=titles,
    overridden=st.lists(st.tuples(people, reasons), max_size=2),
    crashes=counts,
    needed=counts,
    per_day=st.floats(min_value=0, max_value=1e6, allow_nan=False),
    comparable=st.booleans(),
    halted=st.one_of(st.none(), st.sampled_from(["", "by ada: bad postinst", "by the controller"])),
)
def test_the_verdict_reads_right_and_overridden_never_reads_as_too_little_data(
    verdict, judge_sequential, blocking, overridden, crashes, needed, per_day, comparable, halted
):
    said = words.verdict_words(
        verdict=verdict,
        judge_sequential=judge_sequential,
        blocking=blocking,
        overridden=[o for o in overridden if o[0] or o[1]],
        crashes=crashes,
        needed=needed,
        crashes_per_day=per_day,
        comparable=comparable,
        halted=halted,
    )

    reads_right(said.text)
    # A halted update never reads as healthy beside its halt.
    if halted is not None:
        assert said.kind != words.VerdictKind.NO_RISE
    if blocking:
        assert said.kind == words.VerdictKind.REGRESSED
    elif any(o[0] or o[1] for o in overridden):
        assert said.kind == words.VerdictKind.OVERRIDDEN
        assert "too little" not in said.text and "insufficient" not in said.text


@given(low=shares, high=shares)
def test_exposure_is_a_rounded_range_never_narrower_than_it_is_known(low, high):
    said = words.exposure_range(low, high)

    if max(low, high) <= 0:
        assert said == ""
        return
    reads_right(said)
    bounds = [int(n) for n in re.findall(r"\d+", said)]
    assert min(bounds) <= 100 * min(low, high) + 0.5
    assert max(bounds) >= 100 * max(low, high) - 0.5
    if abs(high - low) >= 0.2:  # a wide range is said in fives, not to the point
        assert all(bound % 5 == 0 for bound in bounds)


sequential_assessments = st.builds(
    sequential.SequentialResult,
    verdict=st.sampled_from(list(sequential.Finding)),
    ratio=st.one_of(st.none(), st.floats(min_value=0.01, max_value=50)),
    lower=st.floats(min_value=0, max_value=5),
    upper=st.one_of(st.just(math.inf), st.floats(min_value=0.1, max_value=80)),
    new=counts,
    old=counts,
    evidence=st.floats(min_value=0, max_value=1e6),
    needed=counts,
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    found=sequential_assessments,
    comparable=st.booleans(),
    judge=st.sampled_from(policy.JUDGES),
    share=shares,
)
def test_the_evidence_of_a_judge_result_reads_right(found, comparable, judge, share):
    judgement = SimpleNamespace(assessment=found, comparable=comparable, share=share)
    rules = SimpleNamespace(judge=judge)

    _, evidence = verdicts.verdict_of(rules=rules, judgement=judgement, problems=[])
    reads_right(evidence)
    problem = verdicts.rate_problem(judgement, alpha=0.01)
    if problem is not None:
        reads_right(problem.detail)


moments = st.integers(min_value=-3 * 86400, max_value=30 * 86400).map(
    lambda seconds: NOW + timedelta(seconds=seconds)
)


@st.composite
def outlooks(draw) -> Outlook:
    kind = draw(st.sampled_from(list(Next)))
    percentage = draw(st.integers(min_value=0, max_value=100))
    if kind == Next.ADVANCE:
        return Outlook(
            kind,
            NOW,
            percentage,
            next_percentage=draw(st.integers(min_value=percentage, max_value=100)),
            next_at=draw(moments),
            full_at=draw(st.one_of(st.none(), moments)),
        )
    return Outlook(
        kind,
        NOW,
        percentage,
        hold=draw(st.sampled_from([r for r in HoldReason if r != HoldReason.NONE])),
        detail=draw(st.sampled_from(["", "ada", "libfoo 1.2: halted", "png read row"])),
        since=draw(st.one_of(st.none(), moments)),
    )


@given(outlook=outlooks())
def test_what_happens_next_reads_right(outlook):
    for line in outlook_lines(outlook):
        reads_right(line)
    step, title = next_words(outlook)
    reads_right(step)
    if title:
        reads_right(title)


@given(
    reason=st.sampled_from([r.value for r in HoldReason if r != HoldReason.NONE]),
    detail=st.sampled_from(["", "tracker timeout", "libfoo 1.2: halted"]),
)
def test_every_hold_reads_right(reason, detail):
    reads_right(hold_words(reason, detail))


@given(
    old=st.one_of(st.none(), st.integers(0, 100)),
    new=st.integers(0, 100),
    before=st.one_of(st.none(), st.integers(0, 100)),
    halted=st.booleans(),
    ours=st.integers(0, 100),
    theirs=st.lists(st.integers(0, 100), max_size=4),
    needed=counts,
    per_day=st.floats(min_value=0, max_value=1e5),
    count=st.integers(0, 10_000),
)
def test_percentages_events_and_attention_read_right(
    old, new, before, halted, ours, theirs, needed, per_day, count
):
    reads_right(change_words.percentage_change(old, new))
    reads_right(words.percentage_words(new, before, halted))
    reads_right(words.disagreement_words(ours, theirs, "launchpad"))
    reads_right(words.missing_words(needed, per_day))
    reads_right(words.attention_count(count))
    reads_right(change_words.plural(count, "crash event"))


@pytest.mark.parametrize("badge", list(words.Badge))
def test_each_badge_has_words_and_a_shape_of_its_own(badge):
    label, icon = words.badge_label(badge), words.badge_icon(badge)
    reads_right(label)
    others = [words.badge_label(b) for b in words.Badge if b != badge]
    assert label not in others and icon.strip()


def test_the_checks_catch_each_garble_they_name():
    for garbled in (
        "crash rate no rate yet the previous version's",
        "1 crash events",
        "12 crash report",
        "(likely 0–∞×)",
        "2 problem(s)",
        "held: {reason}",
        "held: crash_data_unavailable",
        "too-little",
        "halts on png: halts on png",
    ):
        with pytest.raises(AssertionError):
            reads_right(garbled)


def test_too_little_data_says_what_is_missing_and_how_long_at_todays_traffic():
    said = words.missing_words(140, crashes_per_day=50)

    assert said == "about 140 more crash reports, ~3 days at today's traffic"
