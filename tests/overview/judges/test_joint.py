"""The anchored and the concurrent test decide together (joint.judged_together): the mean
of their evidence halts at 1/α, so a rise only one of them sees still halts, with the
figures of the test that saw it."""

from __future__ import annotations

import pytest

from overview.judges import anchored, exposure, joint, pipeline, sequential
from tests.overview.judges.test_pipeline import T0, update

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

ALPHA = 0.01


def judged_together(monkeypatch, *, concurrent: float, anchored_evidence: float):
    """The judgement of `update()` when the concurrent test's evidence against "no rise"
    is `concurrent` and the anchored test's is `anchored_evidence`."""
    verdict = (
        sequential.Finding.REGRESSED if concurrent >= 1 / ALPHA else sequential.Finding.INSUFFICIENT
    )
    own = sequential.SequentialResult(
        verdict, 2.4, 1.3 if concurrent >= 1 / ALPHA else 0.8, 4.0, 600, 1600, concurrent, 0
    )
    judgement = pipeline.Judgement(own, exposure.prior(8.0), 0.3, 0.2, 0.4, 10.0, 100.0, True)
    monkeypatch.setattr(
        anchored,
        "anchored",
        lambda *a, **k: anchored.Anchored(
            anchored_evidence, 3.0, 1.5 if anchored_evidence >= 1 / ALPHA else 0.0
        ),
    )
    return joint.judged_together(
        judgement,
        sequential.SequentialTest(alpha=ALPHA),
        anchored.Anchor(expected=[10.0], spread=0.7, level_error=0.2),
        exposure.Sightings([50], [0], [0]),
        exposure.prior(8.0),
        {},
        publication=update(),
        start=T0,
    ).assessment


def test_a_rise_only_the_concurrent_test_sees_halts_once_its_evidence_is_twice_the_bar(
    monkeypatch,
):
    found = judged_together(monkeypatch, concurrent=2.5 / ALPHA, anchored_evidence=0.001)
    assert found.verdict == "regressed"
    assert (found.ratio, found.lower) == (2.4, 1.3)  # the concurrent test's figures
    assert found.evidence == pytest.approx((2.5 / ALPHA + 0.001) / 2)


def test_a_rise_only_the_concurrent_test_sees_below_twice_the_bar_is_not_yet_a_halt(
    monkeypatch,
):
    found = judged_together(monkeypatch, concurrent=1.5 / ALPHA, anchored_evidence=0.001)
    assert found.verdict == "insufficient"
    assert found.lower <= 1.0


def test_a_rise_only_the_anchored_test_sees_halts_with_its_figures(monkeypatch):
    found = judged_together(monkeypatch, concurrent=0.5, anchored_evidence=3 / ALPHA)
    assert found.verdict == "regressed"
    assert (found.ratio, found.lower) == (3.0, 1.5)  # the anchored test's figures
