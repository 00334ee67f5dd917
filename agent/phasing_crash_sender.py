#!/usr/bin/python3
"""phasing-crash-sender: send apport's crash reports as whoopsie sends them.

For machines without whoopsie (Debian has none). The Python standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import stat
import struct
import sys
import urllib.error
import urllib.request
from pathlib import Path

VERSION = "0.2.77"  # the whoopsie whose protocol this speaks (X-Whoopsie-Version)

DESCRIPTION = """\
NAME
    phasing-crash-sender - send apport crash reports as whoopsie does

SYNOPSIS
    phasing-crash-sender [--url URL] [--crash-dir DIR] [--only-marked]
                         [--system-uuid-file FILE] [--timeout SECONDS] [FILE...]

DESCRIPTION
    Reads apport's .crash files (in /var/crash, or the FILEs given) exactly
    as whoopsie reads them: only the fields whoopsie sends (ProblemType,
    Package, SourcePackage, DistroRelease, Architecture, ExecutablePath,
    the signatures, Dependencies, Traceback, StacktraceTop and the others of
    whoopsie's list; never the core dump), control characters replaced by
    "?", a file that is a symlink, or that whoopsie could not parse, refused.
    Each report is sent as a BSON document of strings in a POST to
    CRASH_DB_URL/<SHA-512 of the machine's DMI product UUID>, with whoopsie's
    headers.

    As whoopsie does, a report answered 200 or 400 is marked handled (a
    FILE.uploaded beside it) and never sent again: a 400 means the server
    will not take it, and sending it again would not change that. Any other
    answer (409 already reported, 429 too many, 5xx, no network) leaves it
    for the next run.

OPTIONS
    --url URL          the crash database (default: $CRASH_DB_URL), for
                       Phasing the site's root, e.g. https://phasing.example.org
    --crash-dir DIR    where apport writes reports (default /var/crash)
    --only-marked      send only reports apport marked for upload (a
                       FILE.upload beside them), as whoopsie does; by default
                       every report not yet handled is sent
    --system-uuid-file FILE
                       the machine's UUID (default
                       /sys/class/dmi/id/product_uuid, readable by root; else
                       /etc/machine-id)
    --timeout SECONDS  give up on the server after this long (default 30)

EXIT STATUS
    0 every report was handled or left for later; 2 bad usage.
"""

# whoopsie.c's acceptable_fields: what it sends of a report.
ACCEPTABLE_FIELDS = frozenset(
    {
        "ProblemType",
        "Date",
        "Traceback",
        "Signal",
        "PythonArgs",
        "Package",
        "SourcePackage",
        "PackageArchitecture",
        "Dependencies",
        "MachineType",
        "StacktraceAddressSignature",
        "ApportVersion",
        "DuplicateSignature",
        "DistroRelease",
        "Uname",
        "Architecture",
        "NonfreeKernelModules",
        "UserGroups",
        "ExecutablePath",
        "InterpreterPath",
        "ExecutableTimestamp",
        "ProcCwd",
        "ProcEnviron",
        "ProcCmdline",
        "ProcStatus",
        "ProcMaps",
        "ProcAttrCurrent",
        "Registers",
        "Disassembly",
        "Stacktrace",
        "ThreadStacktrace",
        "StacktraceTop",
        "AssertionMessage",
        "CoreDump",
        "VmCore",
    }
)


class ReportError(Exception):
    """whoopsie's parse_report refused the file (its message)."""


def _clean(data: bytes) -> bytes:
    """Control characters (0x00 to 0x1f) as "?", as whoopsie replaces them."""
    return bytes(b if b >= 0x20 else 0x3F for b in data)


def parse_report(path: Path) -> dict[bytes, bytes]:
    """The fields whoopsie would send of an apport report, as whoopsie.c's parse_report
    reads it (full_report FALSE); ReportError with its message when it refuses."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise ReportError(f"Unable to map report: {error}") from error
    if stat.S_ISLNK(mode) or not stat.S_ISREG(mode):
        raise ReportError(f"{path} is a symlink or is not a regular file.")
    contents = path.read_bytes()
    end = len(contents)
    report: dict[bytes, bytes] = {}
    key: bytes | None = None
    value: bytes | None = None
    ignore = False
    p = 0
    while p < end:
        if contents[p : p + 1] == b" ":
            if key is None and not ignore:
                raise ReportError("Report may not start with a value.")
            p += 1
            line_end = contents.find(b"\n", p)
            line_end = end if line_end < 0 else line_end
            if not ignore and key is not None:
                piece = _clean(contents[p:line_end])
                value = piece if value is None else value + b"\n" + piece
                report[key] = value
            p = line_end + 1
            continue
        value = None
        token = p
        while token < end:
            if contents[token] != 0x3A:  # ":"
                if contents[token] == 0x0A:
                    raise ReportError("Report key must have a value.")
                token += 1
            elif (
                contents[token + 1 : token + 2] == b"\n" and contents[token + 2 : token + 3] != b" "
            ):
                raise ReportError("Report key must have a value.")
            else:
                break
        key = _clean(contents[p:token])
        ignore = key.decode("utf-8", "replace") not in ACCEPTABLE_FIELDS
        token += 1
        while token < end and contents[token] == 0x20:
            token += 1
        start = token
        while token < end and contents[token] != 0x0A:
            token += 1
        if token > start and not ignore and not contents[start:].startswith(b"base64"):
            value = _clean(contents[start:token])
        p = token + 1
        if ignore:
            key = None
        else:
            report[key] = value if value is not None else b""
    return report


def bson_of(report: dict[bytes, bytes]) -> bytes:
    """The report as whoopsie's bsonify makes it: a document of strings (type 0x02),
    the core dump left out (the server asks for it if it wants it)."""
    elements = b""
    for key, value in report.items():
        if key == b"CoreDump":
            continue
        elements += b"\x02" + key + b"\x00" + struct.pack("<i", len(value) + 1) + value + b"\x00"
    return struct.pack("<i", len(elements) + 5) + elements + b"\x00"


def system_id(uuid_file: Path, fallback: Path = Path("/etc/machine-id")) -> str:
    """whoopsie's id: the SHA-512 of the 36 characters of the DMI product UUID; where that
    cannot be read (a container, not root), of the first line of /etc/machine-id."""
    try:
        with open(uuid_file, "rb") as handle:
            uuid = handle.read(36)
        if len(uuid) == 36:
            return hashlib.sha512(uuid).hexdigest()
    except OSError:
        pass
    with open(fallback, "rb") as handle:
        return hashlib.sha512(handle.readline().strip()).hexdigest()


def upload(url: str, system: str, body: bytes, timeout: float) -> tuple[int, str]:
    request = urllib.request.Request(
        f"{url.rstrip('/')}/{system}",
        data=body,
        headers={
            "Content-Type": "application/octet-stream",
            "X-Whoopsie-Version": VERSION,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read(4096).decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read(4096).decode("utf-8", "replace")


def mark_handled(crash: Path) -> None:
    crash.with_suffix(".uploaded").touch()


def handled(crash: Path) -> bool:
    uploaded = crash.with_suffix(".uploaded")
    try:
        return uploaded.stat().st_mtime >= crash.stat().st_mtime
    except OSError:
        return False


def send_report(crash: Path, *, url: str, system: str, timeout: float) -> str:
    """Parse and send one report as whoopsie's parse_and_upload_report; what happened."""
    try:
        report = parse_report(crash)
    except ReportError as error:
        mark_handled(crash)  # whoopsie: "Do not keep trying to parse and upload this"
        return f"{crash}: unable to parse report: {error}"
    try:
        status, text = upload(url, system, bson_of(report), timeout)
    except (urllib.error.URLError, OSError) as error:
        return f"{crash}: not sent ({error}); will try again"
    if status in (200, 400):
        mark_handled(crash)
    if status == 200:
        return f"{crash}: sent, {text.strip()}"
    return f"{crash}: the server replied {status}: {text.strip()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="phasing-crash-sender",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=argparse.SUPPRESS,
    )
    parser.add_argument("--url", default=os.environ.get("CRASH_DB_URL", ""), help=argparse.SUPPRESS)
    parser.add_argument("--crash-dir", default="/var/crash", help=argparse.SUPPRESS)
    parser.add_argument("--only-marked", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--system-uuid-file", default="/sys/class/dmi/id/product_uuid", help=argparse.SUPPRESS
    )
    parser.add_argument("--timeout", type=float, default=30.0, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.url.lower().startswith(("http://", "https://")) or args.url.rstrip("/").endswith(
        ":"
    ):
        print("phasing-crash-sender: no crash database: set CRASH_DB_URL or --url", file=sys.stderr)
        return 2
    system = system_id(Path(args.system_uuid_file))
    if args.files:
        crashes = [Path(f) for f in args.files]
    else:
        crashes = sorted(Path(args.crash_dir).glob("*.crash"))
        if args.only_marked:
            crashes = [c for c in crashes if c.with_suffix(".upload").exists()]
    for crash in crashes:
        if handled(crash):
            continue
        print(send_report(crash, url=args.url, system=system, timeout=args.timeout))
    return 0


if __name__ == "__main__":
    sys.exit(main())
