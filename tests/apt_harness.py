"""A throw-away apt that asks the real apt-get what a machine would upgrade.

Everything apt reads or writes lives under one temporary directory: its configuration
(APT_CONFIG, with the host's apt.conf.d replaced by an empty directory so nothing like
Always-Include-Phased-Updates leaks in), the sources list, a dpkg status file with the
old versions "installed", the lists and the cache. apt-get only simulates (-s), so
nothing is installed; the machine id is passed with APT::Machine-ID.

apt skips phasing without a machine id, with SOURCE_DATE_EPOCH set, or in a chroot
(apt-pkg/upgrade.cc, IsIgnoredPhasedUpdate); the environment given to apt drops
SOURCE_DATE_EPOCH, and ``check_phasing_active`` tells a chroot apart by the answer.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ARCH = "amd64"
APT_TIMEOUT = 120

_INST_RE = re.compile(r"^Inst (\S+) \[([^\]]+)\] \((\S+) ")
_PHASED_RE = re.compile(r"\(phased (\d+)%\)")


class AptHarnessError(RuntimeError):
    pass


def apt_available() -> bool:
    return shutil.which("apt-get") is not None


@dataclass(frozen=True)
class AptRow:
    """One binary package: installed at old_version, new_version offered with a percentage."""

    package: str
    source: str
    old_version: str
    new_version: str
    percentage: int | None  # None: no Phased-Update-Percentage field (100%)
    # The source version apt seeds with; defaults to the binary's new version.
    source_version: str | None = None

    @property
    def effective_source_version(self) -> str:
        return self.source_version or self.new_version


def _source_field(row: AptRow, version: str, source_version: str) -> str:
    if row.source == row.package and source_version == version:
        return ""
    if source_version == version:
        return f"Source: {row.source}\n"
    return f"Source: {row.source} ({source_version})\n"


def packages_text(rows: Iterable[AptRow]) -> str:
    """A Packages index offering each row's new version."""
    stanzas = []
    for row in rows:
        stanza = (
            f"Package: {row.package}\n"
            + _source_field(row, row.new_version, row.effective_source_version)
            + f"Version: {row.new_version}\n"
            f"Architecture: {ARCH}\n"
            "Maintainer: Phasing Tests <tests@example.org>\n"
            "Installed-Size: 1\n"
            f"Filename: pool/main/{row.package}_{row.new_version.replace(':', '%3a')}_{ARCH}.deb\n"
            "Size: 1000\n"
            "SHA256: " + "0" * 64 + "\n"
        )
        if row.percentage is not None:
            stanza += f"Phased-Update-Percentage: {row.percentage}\n"
        stanza += "Description: test package\n"
        stanzas.append(stanza)
    return "\n".join(stanzas)


def status_text(rows: Iterable[AptRow]) -> str:
    """A dpkg status file with each row's old version installed."""
    stanzas = []
    for row in rows:
        stanzas.append(
            f"Package: {row.package}\n"
            "Status: install ok installed\n"
            + _source_field(row, row.old_version, row.old_version)
            + f"Version: {row.old_version}\n"
            f"Architecture: {ARCH}\n"
            "Maintainer: Phasing Tests <tests@example.org>\n"
            "Description: test package\n"
        )
    return "\n".join(stanzas)


def build_flat_repo(
    root: Path, rows: Sequence[AptRow], *, suite: str = "stable-updates", component: str = "main"
) -> Path:
    """The smallest archive apt accepts with [trusted=yes]: one Packages file, no Release."""
    binary_dir = root / "dists" / suite / component / f"binary-{ARCH}"
    binary_dir.mkdir(parents=True, exist_ok=True)
    (binary_dir / "Packages").write_text(packages_text(rows), encoding="utf-8")
    return root


class AptSandbox:
    """A private apt configuration and state under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        for sub in (
            "etc/apt.conf.d",
            "etc/sources.list.d",
            "etc/preferences.d",
            "lists/partial",
            "cache/archives/partial",
            "state",
            "log",
        ):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.config_path = self.root / "apt.conf"
        self.status_path = self.root / "state" / "status"
        self.sources_path = self.root / "etc" / "sources.list"
        self.status_path.write_text("", encoding="utf-8")
        self.sources_path.write_text("", encoding="utf-8")
        r = self.root
        self.config_path.write_text(
            "\n".join(
                [
                    f'Dir::Etc::Parts "{r}/etc/apt.conf.d";',
                    'Dir::Etc::main "/dev/null";',
                    f'Dir::Etc::sourcelist "{self.sources_path}";',
                    f'Dir::Etc::sourceparts "{r}/etc/sources.list.d";',
                    f'Dir::Etc::preferences "{r}/etc/preferences";',
                    f'Dir::Etc::preferencesparts "{r}/etc/preferences.d";',
                    f'Dir::State "{r}/state";',
                    f'Dir::State::Lists "{r}/lists";',
                    f'Dir::State::status "{self.status_path}";',
                    f'Dir::Cache "{r}/cache";',
                    f'Dir::Log "{r}/log";',
                    f'APT::Architecture "{ARCH}";',
                    f'APT::Architectures {{ "{ARCH}"; }};',
                    # Our temporary directories are private to this user; apt's _apt
                    # sandbox user could not read them.
                    'APT::Sandbox::User "root";',
                    'Debug::NoLocking "true";',
                    'Acquire::Languages "none";',
                    "",
                ]
            ),
            encoding="utf-8",
        )

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
        env.update({"APT_CONFIG": str(self.config_path), "LC_ALL": "C", "LANG": "C"})
        return env

    def run(self, *args: str) -> str:
        proc = subprocess.run(
            list(args), env=self._env(), capture_output=True, text=True, timeout=APT_TIMEOUT
        )
        if proc.returncode != 0:
            raise AptHarnessError(
                f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc.stdout + proc.stderr

    def install(self, rows: Iterable[AptRow]) -> None:
        """Mark each row's old version as installed."""
        self.status_path.write_text(status_text(rows), encoding="utf-8")

    def use_archive(
        self,
        root_or_uri: Path | str,
        suites: Sequence[str],
        components: Sequence[str] = ("main",),
        *,
        signed_by: Path | None = None,
    ) -> None:
        uri = root_or_uri if isinstance(root_or_uri, str) else f"file:{Path(root_or_uri).resolve()}"
        option = f"[signed-by={signed_by}]" if signed_by else "[trusted=yes]"
        self.sources_path.write_text(
            "".join(f"deb {option} {uri} {suite} {' '.join(components)}\n" for suite in suites),
            encoding="utf-8",
        )

    def update(self, *, warnings_ok: bool = False) -> str:
        # Start from empty lists so a rewritten archive is read afresh.
        lists = self.root / "lists"
        shutil.rmtree(lists)
        (lists / "partial").mkdir(parents=True)
        output = self.run("apt-get", "update")
        if re.search(r"^E: " if warnings_ok else r"^(W|E): ", output, re.MULTILINE):
            raise AptHarnessError(f"apt-get update complained:\n{output}")
        return output

    def upgrades(self, machine_id: str, *options: str) -> dict[str, str]:
        """What ``apt-get upgrade`` would install on this machine: package -> new version."""
        args = ["apt-get", "-s", "-o", f"APT::Machine-ID={machine_id}"]
        for option in options:
            args += ["-o", option]
        output = self.run(*args, "upgrade")
        found = {}
        for line in output.splitlines():
            match = _INST_RE.match(line)
            if match:
                found[match.group(1)] = match.group(3)
        return found

    def phased_percentages(self, packages: Iterable[str]) -> dict[str, int]:
        """The percentage apt read for each package's candidate ("(phased N%)" in
        apt-cache policy; 100 when it shows none)."""
        output = self.run("apt-cache", "policy", *packages)
        found, current = {}, None
        for line in output.splitlines():
            if line and not line.startswith(" ") and line.endswith(":"):
                current = line[:-1]
                found[current] = 100
            match = _PHASED_RE.search(line)
            if match and current is not None and line.startswith("     ") and "***" not in line:
                found[current] = int(match.group(1))
        return found

    def check_phasing_active(self, package: str, machine_ids: Sequence[str]) -> None:
        """Raise unless apt keeps ``package`` (offered at 0%) back on some of these machines.

        At 0% about 1 machine in 101 takes the update, so when every one of a dozen
        machines takes it apt is skipping phasing (chroot, SOURCE_DATE_EPOCH).
        """
        if all(package in self.upgrades(machine_id) for machine_id in machine_ids):
            raise AptHarnessError(
                "apt ignores phasing here (chroot or SOURCE_DATE_EPOCH?): "
                f"{package} at 0% was upgraded on all {len(machine_ids)} machines"
            )


def apt_upgrades(
    workdir: Path, rows: Sequence[AptRow], machine_ids: Iterable[str]
) -> dict[str, set[str]]:
    """For each machine id, the packages among ``rows`` that apt-get upgrade would take."""
    repo = build_flat_repo(Path(workdir) / "repo", rows)
    sandbox = AptSandbox(Path(workdir) / "apt")
    sandbox.install(rows)
    sandbox.use_archive(repo, ["stable-updates"])
    sandbox.update()
    return {machine_id: set(sandbox.upgrades(machine_id)) for machine_id in machine_ids}
