"""Writes of the archive side, one module per idea.

- changes: what a change is (a Change with a named constructor: advanced, halted,
  superseded, ...), which states allow it, and what it does to a publication in memory.
- phasing: the one writer of phasing events; every change of percentage or state goes
  through it.
- rollouts: what archive admins do to an update (pause, resume, halt, set, release).
- sign_off: the four-eyes rule, asked by every write path and enforced by the services.
- releases: freezing and unfreezing a release. policies: setting a policy.
- sync: bring publications from the publication source into the database.
- writeback: give the publication source the percentages we set, after commit.
- bulk: many rows in one statement, for the above.
"""

from packages.services.changes import Change, TransitionError
from packages.services.phasing import (
    publication_transition,
    publications_apply,
)
from packages.services.policies import POLICY_FIELDS, policy_set
from packages.services.releases import release_freeze, release_unfreeze, release_update
from packages.services.rollouts import (
    publication_halt,
    publication_pause,
    publication_release,
    publication_resume,
    publication_set_percentage,
    reason_required,
)
from packages.services.writeback import write_back_deferred

__all__ = [
    "POLICY_FIELDS",
    "Change",
    "TransitionError",
    "policy_set",
    "publication_halt",
    "publication_pause",
    "publication_release",
    "publication_resume",
    "publication_set_percentage",
    "publication_transition",
    "publications_apply",
    "reason_required",
    "release_freeze",
    "release_unfreeze",
    "release_update",
    "write_back_deferred",
]
