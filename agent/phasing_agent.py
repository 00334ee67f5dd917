#!/usr/bin/python3
"""phasing-agent: tell a Phasing server what apt does with each phased update here.

Dependency-light on purpose: the Python standard library and Debian's python3-apt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

DESCRIPTION = """\
NAME
    phasing-agent - report apt's phasing decisions to a Phasing server

SYNOPSIS
    phasing-agent --url URL [--release CODENAME] [--token-file FILE] [--dry-run]
                  [--timeout SECONDS]

DESCRIPTION
    For every installed package whose candidate version carries a
    Phased-Update-Percentage field, phasing-agent asks apt (through python-apt)
    for the installed and the candidate versions and whether apt holds the
    candidate back for phasing, and posts one batch to
    URL/api/v1/fleet-reports/. The server counts, per update, the machines
    that have it, the ones apt holds back, and the ones on the new version:
    measured uptake, beside the server's estimate.

    Whether apt holds an update back is apt's own answer, never recomputed:
    python-apt's DepCache.phasing_applied() where python-apt has it (2.7 and
    later), else the upgrades "apt-get -s upgrade" takes only with
    APT::Get::Always-Include-Phased-Updates (apt run twice, simulating).

    Run it once a day (the systemd timer phasing-agent.timer does). Sending
    again the same day replaces the machine's last report; it is counted once.

PRIVACY
    The machine is named by the SHA-256 of its machine id (APT::Machine-ID,
    else /etc/machine-id), never the id itself: apt's draw is computed from
    the id, so the id would tell which updates a machine gets. Nothing else
    about the machine is sent: no host name, no address beyond the
    connection's own, no list of other packages.

OPTIONS
    --url URL          the Phasing server, e.g. https://phasing.example.org
    --release NAME     the release codename (default: VERSION_CODENAME of
                       /etc/os-release)
    --token-file FILE  send the token in FILE (the server's PHASING_FLEET_TOKEN)
                       as "Authorization: Bearer <token>"
    --dry-run          print the batch as JSON instead of sending it
    --timeout SECONDS  give up on the server after this long (default 30)

ENVIRONMENT
    APT_CONFIG         an apt configuration file to read, as apt does

EXIT STATUS
    0 sent (or printed); 1 the server refused the batch or could not be
    reached; 2 bad usage; 3 python-apt is missing.

FILES
    /etc/machine-id, /etc/os-release, /lib/systemd/system/phasing-agent.timer
"""

_INST = re.compile(r"^Inst (\S+) ")


def machine_id(config) -> str:
    """The id apt draws with: APT::Machine-ID, else the first line of /etc/machine-id."""
    configured = config.find("APT::Machine-ID", "")
    if configured:
        return configured
    path = config.find_file("Dir::Etc::machine-id", "/etc/machine-id")
    with open(path, encoding="ascii", errors="replace") as handle:
        return handle.readline().strip()


def machine_hash(identifier: str) -> str:
    return hashlib.sha256(identifier.encode("utf-8")).hexdigest()


def release_codename(path: str = "/etc/os-release") -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.strip().partition("=")
                if key == "VERSION_CODENAME":
                    return value.strip("\"'")
    except OSError:
        pass
    return ""


def _apt_get_upgrades(*options: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    env.update({"LC_ALL": "C", "LANG": "C"})
    args = ["apt-get", "-s", "-q"]
    for option in options:
        args += ["-o", option]
    output = subprocess.run(
        [*args, "upgrade"], env=env, capture_output=True, text=True, timeout=600, check=True
    ).stdout
    return {m.group(1) for m in map(_INST.match, output.splitlines()) if m}


def deferred_by_apt_get() -> set[str]:
    """The upgrades apt-get defers for phasing, for python-apt releases without
    DepCache.phasing_applied(): what ``apt-get -s upgrade`` would take if it included
    every phased update, and does not take as it is. apt's own decision, both times."""
    everything = _apt_get_upgrades("APT::Get::Always-Include-Phased-Updates=true")
    return everything - _apt_get_upgrades()


def phased_packages(apt_pkg) -> list[dict]:
    """apt's answer for each installed package with a phased candidate."""
    cache = apt_pkg.Cache(None)
    depcache = apt_pkg.DepCache(cache)
    records = apt_pkg.PackageRecords(cache)
    deferred = None if hasattr(depcache, "phasing_applied") else deferred_by_apt_get()
    facts = []
    for package in cache.packages:
        installed = package.current_ver
        candidate = depcache.get_candidate_ver(package)
        if installed is None or candidate is None:
            continue
        # The candidate's stanza in an archive's index (not dpkg's status file): the one
        # that carries the percentage.
        for file, index in candidate.file_list:
            records.lookup((file, index))
            if "Phased-Update-Percentage" in apt_pkg.TagSection(records.record):
                break
        else:
            continue
        if deferred is None:
            held_back = bool(depcache.phasing_applied(package))
        else:
            held_back = package.name in deferred
        facts.append(
            {
                "package": package.name,
                "source": records.source_pkg or package.name,
                "source_version": records.source_ver or candidate.ver_str,
                "candidate": candidate.ver_str,
                "installed": installed.ver_str,
                "held_back": held_back,
            }
        )
    return sorted(facts, key=lambda f: f["package"])


def send(url: str, batch: dict, timeout: float, token: str = "") -> dict:
    headers = {"Content-Type": "application/json", "User-Agent": "phasing-agent/1"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        url.rstrip("/") + "/api/v1/fleet-reports/",
        data=json.dumps(batch).encode("utf-8"),
        headers=headers,
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.load(response)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="phasing-agent",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=argparse.SUPPRESS,
    )
    parser.add_argument("--url", required=True, help=argparse.SUPPRESS)
    parser.add_argument("--release", default="", help=argparse.SUPPRESS)
    parser.add_argument("--token-file", default="", help=argparse.SUPPRESS)
    parser.add_argument("--dry-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        import apt_pkg
    except ImportError:
        print("phasing-agent: python-apt is missing (apt install python3-apt)", file=sys.stderr)
        return 3
    apt_pkg.init_config()
    apt_pkg.init_system()
    release = args.release or release_codename()
    if not release:
        print("phasing-agent: no release codename; pass --release", file=sys.stderr)
        return 2
    batch = {
        "machine": machine_hash(machine_id(apt_pkg.config)),
        "release": release,
        "packages": phased_packages(apt_pkg),
    }
    if args.dry_run:
        json.dump(batch, sys.stdout, indent=2)
        print()
        return 0
    token = ""
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as handle:
            token = handle.readline().strip()
    try:
        answer = send(args.url, batch, args.timeout, token)
    except urllib.error.HTTPError as error:
        detail = error.read(2000).decode("utf-8", "replace")
        print(f"phasing-agent: the server answered {error.code}: {detail}", file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as error:
        print(f"phasing-agent: could not reach {args.url}: {error}", file=sys.stderr)
        return 1
    for line in answer.get("skipped", []):
        print(f"phasing-agent: the server does not know {line}", file=sys.stderr)
    print(f"phasing-agent: reported {answer.get('kept', 0)} phased update(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
