"""Why an update in phasing does not advance: the one enum, and how it is said.

The controller records a reason on the publication at each tick (`hold_reason`,
`hold_detail`); the pages, the API, the feeds and the dry-run output all word it here.
"""

from __future__ import annotations

from django.db import models


class HoldReason(models.TextChoices):
    NONE = "", "—"
    PAUSED = "paused", "Paused by a person"
    PROBLEMS = "problems", "Halted on problems"
    CRASH_DATA_UNAVAILABLE = "crash_data_unavailable", "Crash data unavailable"
    # The error tracker answers 404: it does not know this source version (it asks the
    # archive), which lasts, unlike an outage. The policy says hold or judge locally.
    UNKNOWN_VERSION = "unknown_version", "Version unknown to the error tracker"
    NOT_ENOUGH_DATA = "not_enough_data", "Not enough data yet"
    RELEASE_FROZEN = "release_frozen", "Release frozen"
    QUIET_WEEKEND = "quiet_weekend", "Quiet weekend"
    PULLED = "pulled", "Pulled by a person"
    CONTROLLER_ERROR = "controller_error", "Controller error"
    # The judge the policy chose failed for this update: it holds, never judged by another.
    JUDGE_FAILED = "judge_failed", "Judge failed"
    WAITING = "waiting", "Waiting for the next step"
    # An update it needs (packages.domain.dependencies) is not ahead of it: halted, paused, or at
    # no higher percentage. The detail names it: "libfoo 1.2: halted".
    DEPENDENCY = "dependency", "Held with an update it needs"


# Each reason's words, once: a tick words the hold of each of thousands of updates.
_WORDS = {reason.value: reason.label.lower() for reason in HoldReason}


def hold_words(reason: str, detail: str = "") -> str:
    """'crash data unavailable: tracker timeout', 'release frozen', ...: lower case, one line.

    A detail that already starts with the reason's own words is not repeated.
    """
    detail = detail.strip()
    if reason == HoldReason.DEPENDENCY and detail:
        return f"held with {detail}"
    words = _WORDS.get(reason, reason)
    if not detail:
        return words
    if detail.lower().startswith(words):
        return detail
    return f"{words}: {detail}"


class UnknownVersion(models.TextChoices):
    """What a policy does with a version the error tracker does not know (a 404)."""

    HOLD = "hold", "Hold until a person decides"
    LOCAL = "local", "Judge on the crash reports held here"
