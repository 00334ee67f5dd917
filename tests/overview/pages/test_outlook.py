"""'What happens next' follows the controller's own rule, on the pages and in the API."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.factories import PublicationFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db


def test_what_happens_next_says_a_resumed_update_with_a_problem_halts_at_the_next_run(
    anonymous, crashes
):
    """The outlook and the controller share one rule: no promised step the tick refuses."""
    from overview.evidence.sources.base import CrashAnswer
    from packages.services import publication_resume
    from tests.factories import UserFactory
    from tests.overview.controller.fakes import T0, new_bucket, tick

    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="regressed"), last_increase_at=T0
    )
    crashes.answers["regressed"] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + timedelta(hours=1))
    publication_resume(publication=publication, actor=UserFactory(), reason="looks fine to me")

    row = anonymous.get("/api/v1/publications/").json()["results"][0]
    assert row["next_step"]["kind"] == "halt"
    assert row["next_step"]["text"] == "→ 0% at the next run: halts on g_main"
    assert 'title="halts on g_main">→ 0 % at the next run<' in anonymous.get("/").content.decode()

    tick(crashes, T0 + timedelta(hours=2))
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == ("halted", 0)


def test_an_overridden_problem_does_not_announce_a_halt(anonymous):
    from tests.factories import OverrideFactory, ProblemFactory

    publication = PublicationFactory(source_package=SourcePackageFactory(name="covered"))
    problem = ProblemFactory(publication=publication)
    OverrideFactory(source_package=publication.source_package, bucket=problem.bucket, version="")
    row = anonymous.get("/api/v1/publications/").json()["results"][0]
    assert row["next_step"]["kind"] == "advance"
