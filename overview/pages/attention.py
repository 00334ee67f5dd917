"""What needs a person now, at the top of the overview: halted updates with their problem
in a few words, updates held for missing or stale data (since when), changes waiting for
a second archive admin's sign-off, updates whose archive percentage differs from what the
controller wrote, and frozen releases. Each with its one next action, a link."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.urls import reverse

from overview.pages import words
from overview.pages.reads import ATTENTION_SHOWN, DATA_HOLDS, NeedsPerson
from overview.pages.selectors import ReleaseSummary
from overview.pages.wording import age, utc_time
from packages.holds import HoldReason
from packages.models import PhasingState, Publication, ScheduledChange
from packages.public_names import public_name
from packages.services.scheduled import AWAITING_SIGN_OFF


@dataclass(frozen=True)
class Item:
    """One thing a person should look at: what, why in a few words, and the next action."""

    title: str
    why: str
    action: str
    url: str
    since: datetime | None = None
    since_words: str = ""


@dataclass
class Group:
    kind: words.Attention
    items: list[Item] = field(default_factory=list)
    total: int = 0
    more_url: str = ""

    @property
    def heading(self) -> str:
        return words.ATTENTION_HEADINGS[self.kind]

    @property
    def more(self) -> int:
        return max(self.total - len(self.items), 0)


def _title(publication: Publication) -> str:
    return (
        f"{publication.source_package.name} {publication.version} in {publication.release.codename}"
    )


def _halt_item(publication: Publication, now: datetime) -> Item:
    actor = getattr(publication, "halt_actor", None) or "controller"
    reason = getattr(publication, "halt_reason", None) or publication.hold_detail
    why = words.shorten(reason) if reason else "no reason recorded"
    if actor != "controller":
        why = f"by {actor}: {why}"
    since = getattr(publication, "halt_at", None) or publication.state_changed_at
    return Item(
        _title(publication),
        why,
        words.ATTENTION_ACTIONS[words.Attention.HALTED],
        publication.get_update_url(),
        since,
        age(since, now),
    )


def _held_item(publication: Publication, now: datetime) -> Item:
    since = publication.crash_data_unavailable_since
    if publication.hold_reason == HoldReason.UNKNOWN_VERSION:
        why = "the error tracker does not know this version; the policy holds it"
        action, url = "Decide: judge locally or keep holding", publication.get_update_url()
    else:
        why = "crash data missing or stale"
        action, url = (
            words.ATTENTION_ACTIONS[words.Attention.HELD_FOR_DATA],
            reverse("overview:sources"),
        )
    return Item(
        _title(publication),
        why,
        action,
        url,
        since,
        f"since {utc_time(since)}" if since else "",
    )


def _disagree_item(publication: Publication, now: datetime) -> Item:
    return Item(
        _title(publication),
        words.disagreement_words(
            publication.written_percentage or 0,
            publication.source_values,
            publication.source_name,
        ),
        words.ATTENTION_ACTIONS[words.Attention.DISAGREE],
        publication.get_update_url(),
        publication.synced_at,
        f"read {age(publication.synced_at, now)}" if publication.synced_at else "",
    )


def _sign_off_item(change: ScheduledChange, now: datetime) -> Item:
    url = (
        change.publication.get_update_url()
        if change.publication is not None
        else reverse("admin:packages_scheduledchange_change", args=[change.pk])
    )
    return Item(
        f"{change.what.capitalize()} {change.target_label}",
        f"asked by {public_name(change.created_by)}: {words.shorten(change.reason)}",
        words.ATTENTION_ACTIONS[words.Attention.SIGN_OFF],
        url,
        change.created_at,
        age(change.created_at, now),
    )


def _frozen_item(summary: ReleaseSummary) -> Item:
    return Item(
        f"{summary.codename} {summary.version}",
        summary.frozen_reason or "no reason given",
        words.ATTENTION_ACTIONS[words.Attention.FROZEN],
        reverse("admin:packages_release_change", args=[summary.release_id]),
    )


def awaiting_sign_off(changes: Iterable[ScheduledChange]) -> list[ScheduledChange]:
    return [
        change
        for change in changes
        if change.is_pending
        and change.signed_off_by_id is None
        and change.outcome == AWAITING_SIGN_OFF
    ]


def attention(
    *,
    rows: Sequence[Publication],
    counts: NeedsPerson,
    scheduled: Sequence[ScheduledChange],
    summaries: Sequence[ReleaseSummary],
    now: datetime,
) -> list[Group]:
    """The groups of things that need a person, in the order they matter; empty ones left
    out. Reads nothing: the rows, counts, scheduled changes and summaries are the page's."""
    halted = Group(words.Attention.HALTED, total=counts.halted, more_url="?state=halted")
    held = Group(words.Attention.HELD_FOR_DATA, total=counts.held_for_data)
    disagree = Group(words.Attention.DISAGREE, total=counts.disagree)
    for publication in rows:
        if publication.state == PhasingState.HALTED:
            group, item = halted, _halt_item(publication, now)
        elif publication.readback_mismatch:
            group, item = disagree, _disagree_item(publication, now)
        elif publication.hold_reason in DATA_HOLDS:
            group, item = held, _held_item(publication, now)
        else:
            continue
        if len(group.items) < ATTENTION_SHOWN:
            group.items.append(item)
    waiting = awaiting_sign_off(scheduled)
    sign_off = Group(
        words.Attention.SIGN_OFF,
        items=[_sign_off_item(change, now) for change in waiting[:ATTENTION_SHOWN]],
        total=len(waiting),
    )
    frozen_list = [summary for summary in summaries if summary.frozen]
    frozen = Group(
        words.Attention.FROZEN,
        items=[_frozen_item(summary) for summary in frozen_list],
        total=len(frozen_list),
    )
    return [group for group in (halted, sign_off, held, disagree, frozen) if group.total]
