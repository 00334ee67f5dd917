"""Writes of the overview app, one module per idea.

- sync: bring publications from the publication source into the database.
- crashes: ingest crash reports, record the problems the crash source reports.
- notifications: email the people behind a halted update, once.
- overrides: a triager's "not caused by this update", and revoking it.
"""
