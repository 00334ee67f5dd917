"""The simulated archive's fixed facts: its releases, the names it draws from, the packages
updated together, and the record of one upload. Plain Python, no Django."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from packages.domain.dependencies import Relation
from packages.sources.base import (
    PersonRecord,
    ReleaseRecord,
)

RELEASES = (
    ReleaseRecord("resolute", "26.04"),
    ReleaseRecord("questing", "25.10"),
    ReleaseRecord("noble", "24.04"),
    ReleaseRecord("jammy", "22.04"),
    ReleaseRecord("focal", "20.04"),
    ReleaseRecord("bionic", "18.04"),
)


# Release dates, so every timeline starts when its release did.
_RELEASED = {
    "resolute": datetime(2026, 4, 23, tzinfo=UTC),
    "questing": datetime(2025, 10, 9, tzinfo=UTC),
    "noble": datetime(2024, 4, 25, tzinfo=UTC),
    "jammy": datetime(2022, 4, 21, tzinfo=UTC),
    "focal": datetime(2020, 4, 23, tzinfo=UTC),
    "bionic": datetime(2018, 4, 26, tzinfo=UTC),
}


_KNOWN_SOURCES = (
    "apport accountsservice apparmor apt aptdaemon at-spi2-core avahi bamf bash bind9 binutils "
    "bluez boost1.83 brltty busybox ca-certificates cairo casper checkbox-ng chromium-browser "
    "cloud-init cockpit colord coreutils cron cryptsetup cups cups-filters curl dbus dconf "
    "debconf dnsmasq docker.io dpkg e2fsprogs evince evolution-data-server exim4 file "
    "findutils firefox flatpak fontconfig freetype fwupd gcc-13 gdm3 ghostscript gimp git "
    "glib2.0 glibc gnome-control-center gnome-initial-setup gnome-shell gnome-software "
    "gnupg2 gnutls28 grub2 gst-plugins-base1.0 gstreamer1.0 gtk+3.0 gtk4 gvfs gzip harfbuzz "
    "ibus initramfs-tools iproute2 iptables isc-dhcp kmod krb5 landscape-client lvm2 libreoffice "
    "libvirt libx11 libxml2 linux-firmware lxd mesa mutter nautilus netplan.io network-manager "
    "nginx nss ntfs-3g nvidia-graphics-drivers-550 open-vm-tools openjdk-21 openldap openssh "
    "openssl openvpn packagekit pam pango1.0 pciutils perl php8.3 pipewire plymouth policykit-1 "
    "postfix postgresql-16 procps pulseaudio python3.12 python-apt qemu rsync rsyslog samba "
    "sane-backends shadow snapd software-properties sosreport sqlite3 squid sudo systemd tar "
    "thunderbird tzdata ubiquity ubuntu-advantage-tools ubuntu-drivers-common ubuntu-release-upgrader "
    "udisks2 ufw unattended-upgrades update-manager update-notifier upower util-linux vim "
    "webkit2gtk wireplumber wpa xdg-desktop-portal xorg-server xz-utils yaru-theme zfs-linux zlib"
).split()


_WORDS = (
    "audio block cache crypt desk disk doc font frame graph image input kit link map media "
    "net note pixel print queue ring scan sense shell sound spell sync task term text time "
    "tree view volt wave web window work zone"
).split()


_FIRST = (
    "Brian Łukasz Steve Robie Andreas Chris Dimitri Iain Julian Lena Mauricio Nick Olivia "
    "Paride Sebastien Simon Timo Utkarsh Heather Graham Alberto Danilo Ioanna Jeremy Kyle "
    "Marc Nadia Rafael Sergio Zixing"
).split()


_LAST = (
    "Murray Zemczak Langasek Basak Hasenack Halse Ledkov Lane Klode Weiss Oliveira Rosbrook "
    "Park Maia Bacher Quigley Jaakola Bhaskar Jones Binns Castro Egberto Sideri Bicha Mitchell "
    "Deslauriers Zahra Lopes Duran Zhang"
).split()


_CHANGELOG_FIXES = (
    "fix a crash when the configuration file is missing",
    "avoid a use-after-free on shutdown",
    "fix a regression in proxy handling",
    "handle an empty response from the server",
    "correct the permissions of the cache directory",
    "fix a memory leak when reloading",
    "keep local changes to the configuration on upgrade",
)


HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Together:
    """Updates uploaded together, as in the archive: a library (with its -dev) and a
    reverse dependency that needs its new version, or a package that Breaks the old one."""

    needed: str
    binaries: tuple[str, ...]  # of the needed source
    dependent: str
    dependent_binaries: tuple[str, ...]
    kind: str  # depends or breaks, from the dependent's first binary
    names: str  # the binary of the needed source it names


TOGETHER = (
    # LP #2025462: gnome-shell needs the new mutter; with mutter kept back apt removed it.
    Together(
        "mutter",
        ("mutter", "libmutter-14-0", "gir1.2-mutter-14", "mutter-common"),
        "gnome-shell",
        ("gnome-shell", "gnome-shell-common", "gnome-shell-extension-prefs"),
        "depends",
        "libmutter-14-0",
    ),
    # LP #1979244: libssl-dev needs the same libssl3t64; openssh is rebuilt against it.
    Together(
        "openssl",
        ("openssl", "libssl3t64", "libssl-dev"),
        "openssh",
        ("openssh-server", "openssh-client", "openssh-sftp-server"),
        "depends",
        "libssl3t64",
    ),
    # LP #2098140: a package that Breaks the old version of one still phasing.
    Together(
        "netplan.io",
        ("netplan.io", "libnetplan1", "netplan-generator"),
        "systemd",
        ("systemd", "libsystemd0", "systemd-resolved"),
        "breaks",
        "netplan.io",
    ),
)


_NEEDED = {t.needed: t for t in TOGETHER}


_DEPENDENT = {t.dependent: t for t in TOGETHER}


# Packages updated together are updated often (libraries and the desktop), so the demo
# shows groups in phasing whatever day it is.
TOGETHER_MEAN_DAYS = 3.0


# A little slower than the default policy's 6 hours: the controller steps on its ticks,
# so it is never behind this assumption, and crash counts never look inflated by it.
RAMP_STEP = timedelta(hours=7)


def seeded_rng(*parts: object) -> random.Random:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


@dataclass(frozen=True)
class Regression:
    kind: str  # "new_bucket", "increased_rate", "false_alarm" or "install_failure"
    # Hours after publication when it starts to show.
    onset_hours: int
    factor: float  # crashes per hour per full share (new bucket) or rate multiplier


@dataclass(frozen=True)
class Upload:
    """One stable release update in the simulated world, with its hidden truth."""

    release: str
    package: str
    version: str
    previous_version: str
    published: datetime
    superseded: datetime  # when the next update is (or will be) published
    signer: PersonRecord
    uploader: PersonRecord
    sponsor: PersonRecord | None
    component: str
    binaries: tuple[str, ...]
    popularity: float  # background crashes per hour across all machines of the release
    regression: Regression | None
    relations: tuple[Relation, ...] = ()

    def ramp_share(self, moment: datetime) -> float:
        """Share of machines the simulator assumes run this version at `moment`."""
        if moment < self.published:
            return 0.0
        hours = (moment - self.published) / HOUR
        if self.regression and hours > self.regression.onset_hours + 18:
            return 0.01  # pulled: only machines whose draw is 0 keep it
        steps = int((moment - self.published) / RAMP_STEP)
        return min(1.0, 0.1 + 0.1 * steps)
