"""The words of the overview: verdicts, state badges, the percentage, exposure and what
needs a person. One module, so every page says them alike and one test reads them all
(tests/overview/pages/test_words.py renders them for generated inputs).

Plain Python: values in, sentences out. Counts agree with their nouns, ranges are rounded
no finer than they are known, and no enum's raw value reaches a reader.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from packages.domain.change_words import plural


def rough_count(count: int) -> int:
    """A count people read as an estimate: two significant figures (140, 1,200, 7)."""
    if count < 100:
        return count
    digits = int(math.floor(math.log10(count))) - 1
    return int(round(count, -digits))


def rough_duration(delta: timedelta) -> str:
    """'~3 days', '~5 h', 'under an hour': for a wait estimated from today's traffic."""
    hours = delta.total_seconds() / 3600
    if hours < 1:
        return "under an hour"
    if hours < 48:
        return f"~{round(hours)} h"
    return f"~{round(hours / 24)} days"


class VerdictKind(StrEnum):
    REGRESSED = "regressed"
    NO_RISE = "no-rise"
    TOO_LITTLE = "too-little"
    OVERRIDDEN = "overridden"
    ADVISORY = "advisory"  # the sequential test sees a rise; Ubuntu's rules judge it
    NOT_JUDGED = "not-judged"
    # Halted (by a person, or on a problem since gone) with no rise in the crash rate: it
    # must not read as healthy beside its halt, so it says who halted it and why.
    HALTED_NO_RISE = "halted-no-rise"


VERDICT_LABELS = {
    VerdictKind.REGRESSED: "regressed",
    VerdictKind.NO_RISE: "no rise seen",
    VerdictKind.TOO_LITTLE: "too little data yet",
    VerdictKind.OVERRIDDEN: "overridden",
    VerdictKind.ADVISORY: "rise seen, not this policy's rule",
    VerdictKind.NOT_JUDGED: "not judged yet",
    VerdictKind.HALTED_NO_RISE: "halted, though no rise seen",
}


@dataclass(frozen=True)
class VerdictWords:
    kind: VerdictKind
    detail: str = ""

    @property
    def label(self) -> str:
        return VERDICT_LABELS[self.kind]

    @property
    def tone(self) -> str:
        """The badge's colour class beside its words: bad, good, or to look at."""
        if self.kind == VerdictKind.REGRESSED:
            return "regressed"
        return "healthy" if self.kind == VerdictKind.NO_RISE else "insufficient"

    @property
    def text(self) -> str:
        return f"{self.label}: {self.detail}" if self.detail else self.label


def missing_words(needed: int, crashes_per_day: float) -> str:
    """'about 140 more crash reports, ~3 days at today's traffic'."""
    if needed <= 0:
        return "more crash reports"
    words = f"about {plural(rough_count(needed), 'more crash report')}"
    days = needed / crashes_per_day if crashes_per_day > 0 else math.inf
    if days > 60:
        return words + ", more than two months at today's traffic"
    return words + f", {rough_duration(timedelta(days=days))} at today's traffic"


def override_words(by: str, reason: str) -> str:
    """'by alice: a known crash in the old version too'."""
    by, reason = by.strip(), " ".join(reason.split())
    if by and reason:
        return f"by {by}: {reason}"
    if by:
        return f"by {by}"
    return reason


def verdict_words(
    *,
    verdict: str | None,
    judge_sequential: bool,
    blocking: list[str],
    overridden: list[tuple[str, str]],
    crashes: int,
    needed: int,
    crashes_per_day: float,
    comparable: bool,
    halted: str | None = None,
) -> VerdictWords:
    """The verdict of one update as people read it.

    `verdict` is the Assessment's (None before the first tick); `blocking` the titles of
    the problems no override covers; `overridden` (who, why) of the overrides that cover
    the others. An overridden problem reads as overridden, never as too little data.
    `halted` is None unless the update is halted, else who halted it and why ('by ada:
    a bad postinst', or '' when nobody said): a halted update never reads as healthy.
    """
    if blocking:
        return VerdictWords(VerdictKind.REGRESSED, ", ".join(dict.fromkeys(blocking)))
    if overridden:
        # One reason once, with everyone who gave it: 'by ada and tess: known crash'.
        by_reason: dict[str, list[str]] = {}
        for by, why in overridden:
            names = by_reason.setdefault(" ".join(why.split()), [])
            if by.strip() and by.strip() not in names:
                names.append(by.strip())
        # Who gave a reason is not named again for an override without one.
        with_reason = {name for why, names in by_reason.items() if why for name in names}
        if "" in by_reason:
            by_reason[""] = [name for name in by_reason[""] if name not in with_reason]
            if not by_reason[""] and len(by_reason) > 1:
                del by_reason[""]
        said = "; ".join(
            override_words(" and ".join(names), why) for why, names in by_reason.items()
        )
        return VerdictWords(VerdictKind.OVERRIDDEN, said)
    if verdict is None:
        return VerdictWords(VerdictKind.NOT_JUDGED)
    if verdict == "regressed":
        return VerdictWords(VerdictKind.REGRESSED)
    if verdict == "healthy":
        over = f"over {plural(crashes, 'crash report')}"
        if halted is not None:
            said = f"halted {halted}" if halted else "halted"
            return VerdictWords(
                VerdictKind.HALTED_NO_RISE, f"{said}; no rise in the crash rate {over}"
            )
        return VerdictWords(VerdictKind.NO_RISE, over)
    if not comparable:
        return VerdictWords(VerdictKind.TOO_LITTLE, "no previous version to compare with")
    if needed > 0 or crashes == 0:
        return VerdictWords(VerdictKind.TOO_LITTLE, missing_words(needed, crashes_per_day))
    if not judge_sequential:
        return VerdictWords(VerdictKind.ADVISORY, "Ubuntu's rules judge this update")
    return VerdictWords(VerdictKind.TOO_LITTLE, "a rise not yet beyond doubt")


def _round_share(value: float, step: int) -> int:
    return int(max(0, min(100, round(100 * value / step) * step)))


def exposure_range(low: float, high: float) -> str:
    """'8–73 %': the share of machines running it, rounded no finer than it is known (to 5
    points when the range is wide), '' when nothing is known."""
    low, high = min(low, high), max(low, high)
    if not (math.isfinite(low) and math.isfinite(high)) or high <= 0:
        return ""
    step = 1 if high - low < 0.2 else 5
    lo, hi = _round_share(low, step), _round_share(high, step)
    if step == 5:  # widen, never narrow, what the rounding keeps
        lo = min(lo, int(100 * low) // 5 * 5)
        hi = max(hi, min(100, math.ceil(100 * high / 5) * 5))
    if lo == hi:
        return f"about {lo} %"
    return f"{lo}–{hi} %"


def percentage_words(percentage: int, before_halt: int | None, halted: bool) -> str:
    """'40 %', or '0 % (was 40 %)' for a halted update, as Ubuntu's report says it."""
    if halted and before_halt:
        return f"{percentage} % (was {before_halt} %)"
    return f"{percentage} %"


class Badge(StrEnum):
    """The state an update's badge shows: text and an icon shape, never colour alone."""

    HALTED = "halted"  # halted by the controller on a problem
    HALTED_BY_PERSON = "halted-by-person"
    PAUSED = "paused"  # a person's pause
    HELD = "held"  # held for missing or stale data
    FROZEN = "frozen"
    RISING = "rising"
    WAITING = "waiting"  # held for another reason (a dependency, the policy's ceiling)
    WATCHED = "watched"  # at 100 %, still judged before it is complete (Rules.watch_at_full)
    DONE = "done"


# (label, icon): the icon is a shape character with its own meaning, beside the words.
BADGES = {
    Badge.HALTED: ("halted", "■"),
    Badge.HALTED_BY_PERSON: ("halted by a person", "■"),
    Badge.PAUSED: ("paused", "❚❚"),
    Badge.HELD: ("held for data", "◌"),
    Badge.FROZEN: ("frozen", "❄"),
    Badge.RISING: ("rising", "▲"),
    Badge.WAITING: ("waiting", "…"),
    Badge.WATCHED: ("watched at 100 %", "◉"),
    Badge.DONE: ("done", "✓"),
}


def badge_label(badge: Badge) -> str:
    return BADGES[badge][0]


def badge_icon(badge: Badge) -> str:
    return BADGES[badge][1]


class Attention(StrEnum):
    HALTED = "halted"
    HELD_FOR_DATA = "held-for-data"
    SIGN_OFF = "sign-off"
    DISAGREE = "disagree"
    FROZEN = "frozen"


ATTENTION_HEADINGS = {
    Attention.HALTED: "Halted",
    Attention.HELD_FOR_DATA: "Held for data",
    Attention.SIGN_OFF: "Waiting for a sign-off",
    Attention.DISAGREE: "Archive and controller disagree",
    Attention.FROZEN: "Frozen release",
}

ATTENTION_ACTIONS = {
    Attention.HALTED: "Review the problem, then resume or keep it halted",
    Attention.HELD_FOR_DATA: "Check the crash source",
    Attention.SIGN_OFF: "Sign off or refuse",
    Attention.DISAGREE: "Compare the archive with the controller",
    Attention.FROZEN: "Unfreeze when the release opens again",
}


def shorten(text: str, limit: int = 80) -> str:
    """A problem in a few words: the first `limit` characters, cut at a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return cut.rstrip(",;:") + "…"


def disagreement_words(ours: int, theirs: list[int], source: str) -> str:
    """'launchpad holds 30 %, the controller 40 %'."""
    held = ", ".join(f"{value} %" for value in dict.fromkeys(theirs)) or "nothing"
    return f"{source or 'the archive'} holds {held}, the controller {ours} %"


def attention_count(count: int) -> str:
    """'Needs a person: 3 updates', or that nothing does."""
    if not count:
        return "Nothing needs a person now."
    return f"{plural(count, 'thing')} need{'s' if count == 1 else ''} a person"
