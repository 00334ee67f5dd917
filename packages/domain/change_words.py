"""How changes of a rollout are said, the same on every page, feed, email and event.

Plain Python, no Django.
"""

from __future__ import annotations


def percentage_change(old: int | None, new: int) -> str:
    """'10% → 20%', or '20%' when nothing changed or nothing was there before."""
    if old is None or old == new:
        return f"{new}%"
    return f"{old}% → {new}%"


def state_change(old: str, new: str) -> str:
    """'Phasing → Halted', or 'Halted' when the state stayed (labels as given)."""
    if not old or old == new:
        return new
    return f"{old} → {new}"


def source_notes(
    *,
    source: str,
    written: int | None,
    read: list[int],
    disagree: bool,
    security_percentage: int | None,
) -> list[str]:
    """What a publication source shows that contradicts us or hurts machines, one line each."""
    notes = []
    shown = ", ".join(f"{value}%" for value in read)
    if written is not None:
        notes.append(f"{source} holds {shown}, not the {written}% we wrote")
    if disagree:
        notes.append(f"binaries at different percentages ({shown}): partial upgrades possible")
    if security_percentage is not None:
        notes.append(
            f"also in -security yet at {security_percentage}% at {source}: apt before 2.7.11 "
            "(2.4.12 on 22.04) keeps it back from machines (LP #2051181)"
        )
    return notes


def upload_people(*, uploader: str, signer: str, sponsor: str) -> str:
    """Who is who behind an upload: 'changes by Bob, sponsored (signed) by Alice'."""
    if sponsor and uploader and sponsor != uploader:
        return f"changes by {uploader}, sponsored (signed) by {sponsor}"
    if uploader and signer and uploader != signer:
        return f"changes by {uploader}, signed by {signer}"
    if uploader and signer:
        return f"uploaded and signed by {uploader}"
    if uploader:
        return f"changes by {uploader}"
    return f"signed by {signer}" if signer else ""


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """'1 crash event', '240 crash events': never 'event(s)', never '1 events'."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def ratio_range(ratio: float | None, low: float, high: float) -> str:
    """A rate against the previous version's: '1.1× (likely 0.8–1.6×)', '2.3× (likely above
    1.2×)' while the test has no upper bound yet, '' before there is a rate at all."""
    if ratio is None:
        return ""
    lower = f"{low:.2g}" if low > 0 else "0"
    if high == float("inf") or high != high:  # no upper bound (or none computable) yet
        return f"{ratio:.2g}× (likely above {lower}×)" if low > 0 else f"{ratio:.2g}×"
    return f"{ratio:.2g}× (likely {lower}–{high:.2g}×)"
