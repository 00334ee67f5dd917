"""A realistic archive for the polish tests: long names and versions, several problems,
verdicts with their evidence, a frozen release, and a history with a halt, a resume and a
second halt."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from packages.models import EventKind, PhasingState, Release
from tests.factories import (
    AssessmentFactory,
    CrashReportFactory,
    ErrorBucketFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
    SourceSyncFactory,
)

FREEZE_REASON = "archive opening for the point release"


def polish_archive() -> dict[str, object]:
    now = timezone.now().replace(second=0, microsecond=0)
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    Release.objects.filter(pk=jammy.pk).update(
        frozen=True, frozen_reason=FREEZE_REASON, frozen_at=now - timedelta(hours=3)
    )
    SourceSyncFactory(last_success_at=now)
    rows = (
        ("gnome-shell-extension-desktop-icons-ng", noble, 60, PhasingState.PHASING),
        ("coreutils", noble, 20, PhasingState.PHASING),
        ("openssl", noble, 40, PhasingState.PAUSED),
        ("systemd", jammy, 80, PhasingState.PHASING),
        ("linux-firmware-raspi", jammy, 30, PhasingState.PHASING),
    )
    publications = {}
    for name, release, percentage, state in rows:
        publications[name] = PublicationFactory(
            release=release,
            source_package=SourcePackageFactory(name=name),
            version=f"46.0-0ubuntu1~24.04.{percentage}+really45.2-3ubuntu0.1",
            previous_version="45.2-3ubuntu0.24.04.1",
            phased_update_percentage=percentage,
            state=state,
            date_published=now - timedelta(days=2),
            last_increase_at=now - timedelta(hours=2),
        )
        AssessmentFactory(
            publication=publications[name],
            assessed_at=now,
            **(
                {"verdict": "insufficient", "evidence": "12 crash events of the 40 needed"}
                if name == "coreutils"
                else {}
            ),
        )
    mutter = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="mutter"),
        version="46.2-1ubuntu0.24.04.13",
        previous_version="46.2-1ubuntu0.24.04.12",
        phased_update_percentage=0,
        state=PhasingState.HALTED,
        percentage_before_halt=30,
        date_published=now - timedelta(days=2),
    )
    AssessmentFactory(
        publication=mutter,
        verdict="regressed",
        evidence="crash rate 4.1× (2.2–7.9×) the previous version's over 61 crash events",
        assessed_at=now,
    )
    history = (
        (48, EventKind.PUBLISHED, None, 10, PhasingState.PHASING, ""),
        (42, EventKind.ADVANCED, 10, 20, PhasingState.PHASING, ""),
        (36, EventKind.ADVANCED, 20, 30, PhasingState.PHASING, ""),
        (33, EventKind.HALTED, 30, 0, PhasingState.HALTED, "new problem: meta_window_move"),
        (20, EventKind.RESUMED, 0, 30, PhasingState.PHASING, "not caused by this update"),
        (14, EventKind.ADVANCED, 30, 40, PhasingState.PHASING, ""),
        (1, EventKind.HALTED, 40, 0, PhasingState.HALTED, "new problem: clutter_actor_paint"),
    )
    for hours, kind, old, new, state, reason in history:
        PhasingEventFactory(
            publication=mutter,
            kind=kind,
            old_percentage=old,
            new_percentage=new,
            new_state=state,
            reason=reason,
            created_at=now - timedelta(hours=hours),
        )
    buckets = []
    for function in (
        "meta_window_actor_x11_process_damage_and_update_surface_texture_with_long_name",
        "clutter_actor_paint",
        "g_closure_invoke",
    ):
        bucket = ErrorBucketFactory(
            function=function,
            signature=f"/usr/bin/gnome-shell:11:{function}:g_signal_emit_valist:g_signal_emit",
        )
        ProblemFactory(publication=mutter, bucket=bucket)
        buckets.append(bucket)
    report = CrashReportFactory(
        bucket=buckets[0],
        source_package=mutter.source_package,
        version=mutter.version,
        release=noble,
        reported_at=now - timedelta(hours=2),
    )
    return {
        "now": now,
        "report": report,
        "noble": noble,
        "jammy": jammy,
        "mutter": mutter,
        "buckets": buckets,
    }
