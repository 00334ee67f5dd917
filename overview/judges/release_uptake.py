"""What a release's updates measured of their uptake together, and how far one update may
differ from the others (a hierarchical model over the updates' own likelihoods)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from overview.judges.exposure import (
    UPTAKE_GRID,
    Deficit,
    Sightings,
    Uptake,
    _log_likelihood,
    _posterior,
    prior,
)

# How far one update's uptake may differ from its release's (a log-normal spread) when the
# release has too few measured updates to say (between_updates): a factor of about 2.7
# either way is one standard deviation.
UPDATE_SPREAD = 1.0


@dataclass(frozen=True)
class Part:
    """What one update measured of its uptake: the log-likelihood over the grid of its
    sightings and deficit, and the machines and hours it rests on."""

    likelihood: np.ndarray
    sightings: int
    measured: int


def part_of(seen: Sightings, deficit: Deficit | None) -> Part | None:
    """One update's part in its release's belief (None: it measured nothing)."""
    own = np.zeros(len(UPTAKE_GRID))
    sightings = measured = 0
    if seen.total:
        own += _log_likelihood(seen.percentages, seen.new, seen.old)
        sightings = seen.total
    if deficit is not None and deficit.measured:
        own += deficit.log_likelihood(seen.percentages)
        measured = deficit.measured
    if not sightings and not measured:
        return None
    return Part(own, sightings, measured)


def fitted(part: Part | None, belief: Uptake) -> Uptake:
    """exposure.fit from the update's part, already read for its release's belief: the same
    likelihood of its sightings and deficit, not taken a second time (a tick judges 20,000
    updates, and this was a tenth of it)."""
    if part is None:
        return belief
    return _posterior(part.likelihood, belief, part.sightings, part.measured)


def pooled(updates: Sequence[tuple[Sightings, Deficit | None]], default: Uptake) -> Uptake:
    """What a release's updates measured together: the belief for each of its updates,
    widened by how much one update may differ from the others (between_updates)."""
    return pooled_parts([part_of(seen, deficit) for seen, deficit in updates], default)


def pooled_parts(parts: Sequence[Part | None], default: Uptake) -> Uptake:
    """pooled, from each update's part (kept from an earlier tick, or read now)."""
    likelihood = np.zeros(len(UPTAKE_GRID))
    each = []
    sightings = measured = 0
    for part in parts:
        if part is None:
            continue
        each.append(part.likelihood)
        likelihood += part.likelihood
        sightings += part.sightings
        measured += part.measured
    if not sightings and not measured:
        return default
    together = _posterior(likelihood, default, sightings, measured)
    widened = prior(together.hours, between_updates(each))
    return Uptake(widened.hours, widened.fast, widened.slow, sightings, measured)


# How far one update's uptake may be from its release's (log-normal spreads considered),
# the fewest measured updates that may say it, and the least taken however alike they are.
_SPREADS = np.array([0.25, 0.35, 0.5, 0.7, 0.85, 1.0, 1.2, 1.5])


def _centre_weights(spread: float) -> np.ndarray:
    """weights[m, μ]: a normal of log μ around each centre m of the grid, normalised. The
    smallest is about 1e-173 at the narrowest spread across the whole grid, well within a
    float's range, so the sums over μ need no log-space."""
    logs = np.log(UPTAKE_GRID)
    weights = -0.5 * ((logs[None, :] - logs[:, None]) / spread) ** 2
    return np.exp(weights - np.logaddexp.reduce(weights, axis=1, keepdims=True))


_CENTRE_WEIGHTS = [_centre_weights(s) for s in _SPREADS]


BETWEEN_MIN_UPDATES = 5


BETWEEN_MIN_SPREAD = 0.25


# The upper end of the spread's profile-likelihood 95 % interval (χ² with one degree of
# freedom: 3.84 / 2).
_PROFILE_DROP = 1.92


def between_updates(likelihoods: Sequence[np.ndarray]) -> float:
    """How far one update's uptake may differ from its release's: the upper end of what
    the release's own measured updates allow (a hierarchical model: each update's log
    uptake normal around the release's, its spread fitted by maximum marginal likelihood
    over the updates' own likelihoods and taken at the upper end of its 95 % interval).
    Updates that run the same update timers agree and tighten it; updates that differ
    widen it. With fewer than BETWEEN_MIN_UPDATES measured, UPDATE_SPREAD."""
    if len(likelihoods) < BETWEEN_MIN_UPDATES:
        return UPDATE_SPREAD
    own = np.stack(likelihoods)  # [update, μ], log-likelihoods
    # Each update's likelihood scaled to a peak of 1: no underflow where it matters.
    own = np.exp(own - own.max(axis=1, keepdims=True))
    profile = []
    for weights in _CENTRE_WEIGHTS:
        # Σ_updates log Σ_μ L_i(μ) w(m, μ), for every centre m (a matrix product over
        # thousands of updates); the best centre.
        marginal = np.log(own @ weights.T).sum(axis=0)
        profile.append(float(marginal.max()))
    best = max(profile)
    allowed = [
        float(s) for s, p in zip(_SPREADS, profile, strict=True) if p >= best - _PROFILE_DROP
    ]
    return max(BETWEEN_MIN_SPREAD, max(allowed))
