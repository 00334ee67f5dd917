"""Triage: the restricted crash reports behind a bucket, and overriding problems.

Only members of the triagers group (and superusers) read reports; overriding needs its
own permission. Views, forms and URLs live here; writes go through overview.triage.overrides.
"""
