"""The scenario written into the scratch database as an archive: releases, policies, the
updates' publications and their previous versions' crash history, as the tracker would
hold it."""

from __future__ import annotations

from datetime import datetime, timedelta

from overview.backtest.realism import WorldSpec
from overview.backtest.scenarios import DEPENDENT_VERSION, PolicySpec, Scenario, Update
from overview.backtest.world import UpdateWorld
from overview.models import (
    BucketVersionStat,
    CrashCounter,
    ErrorBucket,
)
from packages.domain import policy as policy_rules
from packages.models import (
    PhasingState,
    Policy,
    Publication,
    Release,
    SourcePackage,
)
from packages.services.phasing import publications_publish

HISTORY_DAYS = 15


RELEASE_VERSIONS = {
    "bionic": "18.04",
    "focal": "20.04",
    "jammy": "22.04",
    "noble": "24.04",
    "oracular": "24.10",
    "plucky": "25.04",
    "questing": "25.10",
    "resolute": "26.04",
}


def archive_setup(
    scenario: Scenario, judge: str, seed: int, world_spec: WorldSpec
) -> dict[int, Update]:
    start = scenario.start
    releases = {
        name: Release.objects.create(codename=name, version=RELEASE_VERSIONS.get(name, "0"))
        for name in sorted({u.release for u in scenario.updates})
    }
    Policy.objects.create(judge=judge, **_policy_fields(scenario.policy))
    packages: dict[str, SourcePackage] = {}
    own_policies: dict[str, PolicySpec] = {}
    for update in scenario.updates:
        packages.setdefault(
            update.source_package, SourcePackage.objects.create(name=update.source_package)
        )
        if update.policy is not None:
            merged = scenario.policy.merged(update.policy)
            if own_policies.setdefault(update.source_package, merged) != merged:
                raise ValueError(f"updates of {update.source_package} have different policies")
    for name, spec in own_policies.items():
        Policy.objects.create(source_package=packages[name], judge=judge, **_policy_fields(spec))
    first = {
        name: _rules(scenario.policy.merged(own_policies.get(name))).first_percentage
        for name in packages
    }
    rows = [
        Publication(
            source_package=packages[u.source_package],
            release=releases[u.release],
            version=u.version,
            previous_version=u.previous_version,
            binaries=[u.source_package],
            date_published=start,
            phased_update_percentage=first[u.source_package],
            state=PhasingState.PHASING,
            state_changed_at=start,
            last_increase_at=start,
            source_name="backtest",
        )
        for u in scenario.updates
    ]
    publications_publish(rows, now=start, by="backtest")
    _own_updates(scenario, releases, start)
    for publication, update in zip(rows, scenario.updates, strict=True):
        _history(update, publication, UpdateWorld(update, seed=seed, spec=world_spec, start=start))
    return {p.pk: u for p, u in zip(rows, scenario.updates, strict=True)}


def _own_updates(scenario: Scenario, releases: dict[str, Release], start: datetime) -> None:
    """A dependent's own new version (scenario `dependents.own_update`): published with
    the update it depends on, and already everywhere it goes in the world (which installs
    it with that update), so the controller has nothing to phase."""
    for update in scenario.updates:
        own = update.dependents.own_update if update.dependents else None
        if own is None:
            continue
        name = f"{update.source_package}-app"
        package, _ = SourcePackage.objects.get_or_create(name=name)
        Publication.objects.create(
            source_package=package,
            release=releases[update.release],
            version=own.version,
            previous_version=DEPENDENT_VERSION,
            binaries=[name],
            date_published=start,
            phased_update_percentage=100,
            state=PhasingState.COMPLETE,
            state_changed_at=start,
            last_increase_at=start,
            source_name="backtest",
        )


def _policy_fields(spec: PolicySpec) -> dict[str, object]:
    fields: dict[str, object] = {}
    for name in ("start_percentage", "step", "ceiling", "quiet_weekend", "insufficient_gate"):
        if getattr(spec, name) is not None:
            fields[name] = getattr(spec, name)
    if spec.schedule is not None:
        fields["schedule"] = list(spec.schedule)
    if spec.interval_hours is not None:
        fields["interval"] = timedelta(hours=spec.interval_hours)
    if spec.insufficient_max_hold_hours is not None:
        fields["insufficient_max_hold"] = timedelta(hours=spec.insufficient_max_hold_hours)
    return fields


def _rules(spec: PolicySpec) -> policy_rules.Rules:
    return Policy(**_policy_fields(spec)).rules()


def _history(update: Update, publication: Publication, world: UpdateWorld) -> None:
    """The previous version's fifteen days before the start, as ingest would have counted
    them: daily counters and its buckets with reports and machines."""
    daily, buckets = world.history(HISTORY_DAYS)
    first_day = (publication.date_published - timedelta(days=HISTORY_DAYS)).date()
    CrashCounter.objects.bulk_create(
        CrashCounter(
            release_id=publication.release_id,
            source_package_id=publication.source_package_id,
            version=update.previous_version,
            day=first_day + timedelta(days=n),
            count=count,
        )
        for n, count in enumerate(daily)
        if count
    )
    # The packages that depend on it have days before the start too (the tracker counts
    # every package's crashes every day), crashing as busily as the fleet was each day.
    dependents = world.dependents_history(HISTORY_DAYS)
    if any(dependents):
        dependent, _ = SourcePackage.objects.get_or_create(name=world.dependent_package)
        CrashCounter.objects.bulk_create(
            CrashCounter(
                release_id=publication.release_id,
                source_package_id=dependent.pk,
                version=world.DEPENDENT_VERSION,
                day=first_day + timedelta(days=n),
                count=count,
            )
            for n, count in enumerate(dependents)
            if count
        )
    for signature, (reports, machines) in buckets.items():
        bucket, _ = ErrorBucket.objects.get_or_create(
            signature=signature,
            defaults={
                "function": signature.split(":")[2],
                "source_package_id": publication.source_package_id,
            },
        )
        BucketVersionStat.objects.create(
            release_id=publication.release_id,
            source_package_id=publication.source_package_id,
            version=update.previous_version,
            bucket=bucket,
            reports=reports,
            systems=machines,
        )
