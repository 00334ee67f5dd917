"""An archive for the overview's browser tests: 30 updates in two releases in every state a
badge tells apart (rising, paused, halted by the controller and by a person, held for
data, frozen, waiting, watched at 100 %), with verdicts, an overridden problem, a dependent group, a
disagreeing archive and a change waiting for a sign-off."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from overview.models import ProblemKind, Verdict
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState, Release
from packages.services.scheduled import AWAITING_SIGN_OFF
from tests.factories import (
    AssessmentFactory,
    OverrideFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    ScheduledChangeFactory,
    SourcePackageFactory,
    SourceSyncFactory,
    UserFactory,
)

NAMES = (
    "openssl", "openssh", "systemd", "coreutils", "bash", "glibc", "python3.12", "curl",
    "gnome-shell-extension-desktop-icons-ng", "mutter", "gnome-shell", "linux-firmware",
    "apt", "dpkg", "snapd", "network-manager", "cups", "pulseaudio", "xorg-server",
    "firefox", "thunderbird", "libreoffice", "vim", "nano", "openjdk-21", "nginx",
    "apache2", "postgresql-16", "redis", "git",
)  # fmt: skip


def overview_archive() -> dict[str, object]:
    now = timezone.now().replace(second=0, microsecond=0)
    noble = ReleaseFactory(codename="noble", version="24.04")
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    Release.objects.filter(pk=jammy.pk).update(
        frozen=True, frozen_reason="point release 22.04.6", frozen_at=now - timedelta(hours=3)
    )
    SourceSyncFactory(last_success_at=now)
    ada = UserFactory(username="ada")
    updates = {}
    for n, name in enumerate(NAMES):
        release = noble if n < 20 else jammy
        updates[name] = PublicationFactory(
            release=release,
            source_package=SourcePackageFactory(name=name),
            version=f"{n + 1}.{n % 4}-{n % 3}ubuntu0.24.04.{n + 1}",
            previous_version=f"{n + 1}.{n % 4}-{n % 3}ubuntu0.24.04.{n}",
            phased_update_percentage=10 * (n % 9 + 1),
            date_published=now - timedelta(days=2, hours=n),
            last_increase_at=now - timedelta(hours=n % 6),
        )
        AssessmentFactory(
            publication=updates[name],
            assessed_at=now,
            **(
                {
                    "verdict": Verdict.INSUFFICIENT,
                    "crashes_needed": 140 + 10 * n,
                    "crashes_new": 5 + n,
                    "crashes_old": 40,
                    "share_low": 0.08,
                    "share_high": 0.73,
                }
                if n % 3
                else {}
            ),
        )
    # Halted by the controller, with its problem, at 0 % from 40 %.
    halted = updates["mutter"]
    PublicationFactory._meta.model.objects.filter(pk=halted.pk).update(
        state=PhasingState.HALTED,
        phased_update_percentage=0,
        percentage_before_halt=40,
        hold_reason=HoldReason.PROBLEMS,
        state_changed_at=now - timedelta(hours=1),
    )
    ProblemFactory(publication=halted, bucket__function="clutter_actor_paint")
    PhasingEventFactory(
        publication=halted,
        kind=EventKind.HALTED,
        old_percentage=40,
        new_percentage=0,
        new_state=PhasingState.HALTED,
        reason="new problem: clutter_actor_paint (12 systems, 30 reports)",
        created_at=now - timedelta(hours=1),
    )
    # Halted by a person.
    pulled = updates["curl"]
    PublicationFactory._meta.model.objects.filter(pk=pulled.pk).update(
        state=PhasingState.HALTED, phased_update_percentage=0, percentage_before_halt=30,
        hold_reason=HoldReason.PULLED, state_changed_at=now - timedelta(hours=5),
    )  # fmt: skip
    PhasingEventFactory(
        publication=pulled, kind=EventKind.HALTED, old_percentage=30, new_percentage=0,
        new_state=PhasingState.HALTED, actor=ada, actor_name="ada",
        reason="regression report in LP: #2091234", created_at=now - timedelta(hours=5),
    )  # fmt: skip
    # Paused by a person.
    paused = updates["bash"]
    PublicationFactory._meta.model.objects.filter(pk=paused.pk).update(
        state=PhasingState.PAUSED, hold_reason=HoldReason.PAUSED
    )
    PhasingEventFactory(
        publication=paused, kind=EventKind.PAUSED, new_state=PhasingState.PAUSED,
        actor=ada, actor_name="ada", reason="waiting on a bug", created_at=now - timedelta(hours=2),
    )  # fmt: skip
    # Held for missing crash data since two hours.
    PublicationFactory._meta.model.objects.filter(pk=updates["snapd"].pk).update(
        hold_reason=HoldReason.CRASH_DATA_UNAVAILABLE,
        crash_data_unavailable_since=now - timedelta(hours=2),
    )
    # At 100 % since its last step three hours ago, still judged for three days.
    PublicationFactory._meta.model.objects.filter(pk=updates["network-manager"].pk).update(
        phased_update_percentage=100,
        hold_reason=HoldReason.WAITING,
        hold_detail=f"at 100%, still judged until {now + timedelta(hours=69):%Y-%m-%d %H:%M} UTC",
    )
    # The archive holds another percentage than the controller wrote.
    PublicationFactory._meta.model.objects.filter(pk=updates["cups"].pk).update(
        written_percentage=50, written_at=now - timedelta(hours=1),
        synced_at=now - timedelta(minutes=10), source_percentage=30,
    )  # fmt: skip
    # An overridden rise.
    rise = ProblemFactory(
        publication=updates["glibc"], kind=ProblemKind.INCREASED_RATE, bucket=None
    )
    OverrideFactory(
        source_package=rise.publication.source_package, kind=ProblemKind.INCREASED_RATE,
        bucket=None, created_by=ada, reason="the rise is in the old version too",
    )  # fmt: skip
    # A dependent group: openssh needs the openssl in phasing.
    PublicationFactory._meta.model.objects.filter(pk=updates["openssl"].pk).update(
        binaries=["libssl3t64", "openssl"]
    )
    PublicationFactory._meta.model.objects.filter(pk=updates["openssh"].pk).update(
        binaries=["openssh-server"],
        relations=[["depends", "openssh-server", "libssl3t64", ">=", updates["openssl"].version]],
    )
    # A release to everyone waiting for a second archive admin.
    ScheduledChangeFactory(
        publication=updates["systemd"], action="release", run_at=now, created_by=ada,
        reason="fixes the boot hang of LP: #2090000", outcome=AWAITING_SIGN_OFF,
    )  # fmt: skip
    ScheduledChangeFactory(
        publication=updates["coreutils"], run_at=now + timedelta(days=1), created_by=ada,
        reason="hold over the weekend",
    )  # fmt: skip
    return {"now": now, "noble": noble, "jammy": jammy, "updates": updates}
