"""Writes of the controller side, one module per idea.

- ingest (and ingest_copy, its PostgreSQL path): store crash reports with their counters.
- crash_sync: bring crash reports from the crash source, through ingest.
- problems: record the problems each crash answer reports for a publication.
- notifications: email the people behind a halted update, once.
- overrides: a triager's "not caused by this update", and revoking it.
"""
