"""whoopsie's crash report, as daisy (the error tracker's submit handler) reads it: the
BSON body decoded, validated and cut down to the fields Phasing keeps.

Plain Python (no Django): the view answers what this module says; the store keeps what it
returns. The answers follow daisy's src/daisy/submit.py: 400 for a body it cannot read
(whoopsie then gives up on the report, as it should), 409 for a crash the system already
reported, and ``<uuid> OOPSID`` for a report kept. Only an allow-list of fields is kept:
no core dump, no stack trace, no environment, no free text.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import bson
from bson.errors import BSONError

# whoopsie hashes the DMI product UUID with SHA-512 and sends it as 128 hex digits.
SYSTEM_ID_RE = re.compile(r"^[0-9a-fA-F]{128}$")

# Bounds of each kept field, as the columns and the pages use them.
MAX_NAME = 100
MAX_VERSION = 200
MAX_PATH = 500
MAX_SIGNATURE = 1000
MAX_DEPENDENCIES = 1000
MAX_SHORT = 100

# apport's package names and Debian versions (policy 5.6.1, 5.6.12), as the archive has them.
_PACKAGE_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]*$")
_VERSION_RE = re.compile(r"^(?:[0-9]+:)?[0-9A-Za-z][A-Za-z0-9.+~:-]*$")
_RELEASE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9 ._-]*$")
_ARCH_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_PROBLEM_TYPE_RE = re.compile(r"^[A-Za-z]+$")

# What whoopsie sends that the kept fields and the signature are built from (whoopsie.c's
# acceptable_fields); everything else in the body is read only to build those, then dropped.
KEPT_FIELDS = (
    "Package",
    "SourcePackage",
    "DistroRelease",
    "Architecture",
    "ProblemType",
    "ExecutablePath",
    "DuplicateSignature",
    "StacktraceAddressSignature",
    "Date",
    "Dependencies",
)


class Refused(Exception):
    """A report Phasing does not keep, with daisy's status and a line of plain text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class IntakeReport:
    """The kept fields of one report, each within its bound."""

    package: str
    version: str
    source_package: str
    release: str  # DistroRelease as sent: "Ubuntu 24.04"
    architecture: str
    problem_type: str
    executable_path: str
    signature: str
    date: str
    dependencies: dict[str, str] = field(default_factory=dict)
    # The report's identity for replays (daisy's md5 of Date, ExecutablePath and
    # ProcStatus per system; the whole body when one of those is missing).
    replay_key: str = ""

    def as_fields(self) -> dict[str, object]:
        return {
            "Package": f"{self.package} {self.version}",
            "SourcePackage": self.source_package,
            "DistroRelease": self.release,
            "Architecture": self.architecture,
            "ProblemType": self.problem_type,
            "ExecutablePath": self.executable_path,
            "Signature": self.signature,
            "Date": self.date,
            "Dependencies": self.dependencies,
        }


def valid_system_id(system_id: str) -> bool:
    return bool(SYSTEM_ID_RE.match(system_id))


def decode(body: bytes) -> dict[str, str]:
    """The BSON document whoopsie sends: every value a string (bson_append_string)."""
    if not body:
        raise Refused(400, "Invalid BSON.")
    try:
        if not bson.is_valid(body):
            raise Refused(400, "Invalid BSON.")
        document = bson.decode(body)
    except (BSONError, MemoryError, ValueError, OverflowError) as error:
        raise Refused(400, "Invalid BSON.") from error
    if not document:
        raise Refused(400, "Empty report.")
    for key, value in document.items():
        if not isinstance(value, str):
            raise Refused(400, f"Invalid BSON Document: {key[:60]!r} is not a string.")
    return document


def split_package(line: str) -> tuple[str, str]:
    """apport's "name version [origin: ...]" as (name, version), as daisy's
    utils.split_package_and_version; "(not installed)" is no version."""
    words = line.split()[:2]
    if len(words) < 2 or words[1] == "(not":
        return (words[0] if words else "", "")
    return words[0], words[1]


def _text(document: dict[str, str], key: str, bound: int, pattern: re.Pattern[str] | None) -> str:
    value = document.get(key, "").strip()
    if len(value) > bound:
        raise Refused(400, f"{key} is longer than {bound} characters.")
    if value and pattern is not None and not pattern.match(value):
        raise Refused(400, f"{key} is not valid.")
    if "\x00" in value:
        raise Refused(400, f"{key} holds a NUL byte.")
    return value


def dependencies_of(text: str) -> dict[str, str]:
    """apport's Dependencies field (one "name version [origin: ...]" a line) as
    {name: version}; lines that name no valid package and version are left out."""
    versions: dict[str, str] = {}
    for line in text.splitlines():
        name, version = split_package(line)
        if (
            name
            and version
            and len(name) <= MAX_NAME
            and len(version) <= MAX_VERSION
            and _PACKAGE_NAME_RE.match(name)
            and _VERSION_RE.match(version)
        ):
            versions[name] = version
            if len(versions) > MAX_DEPENDENCIES:
                raise Refused(400, f"Dependencies names more than {MAX_DEPENDENCIES} packages.")
    return versions


def signature_of(document: dict[str, str]) -> str:
    """The bucket of a report without retracing, as daisy's bucket() finds it: the
    DuplicateSignature apport set (install failures, recoverable problems); a Python
    crash's signature as apport builds it from the Traceback; for a binary crash the
    StacktraceAddressSignature (daisy maps it to the retraced signature, which Phasing
    has no retracer for), else apport's signature from StacktraceTop. '' when none."""
    if document.get("DuplicateSignature"):
        return document["DuplicateSignature"]
    path = document.get("ExecutablePath", "")
    if document.get("Signal") == "6" and document.get("AssertionMessage") and path:
        return re.sub(r"0x[0-9a-f]{6,}", "ADDR", f"{path}:{document['AssertionMessage']}")
    if "Traceback" in document and path:
        return _python_signature(
            path, document["Traceback"], document.get("_PythonExceptionQualifier")
        )
    if document.get("StacktraceAddressSignature"):
        return document["StacktraceAddressSignature"]
    if "StacktraceTop" in document and "Signal" in document and path:
        return _signal_signature(path, document["Signal"], document["StacktraceTop"])
    return ""


def _python_signature(path: str, traceback: str, qualifier: str | None) -> str:
    trace = traceback.splitlines()
    if len(trace) == 1:
        m = re.match(r"(\w+): ", trace[0])
        return f"{path}:{m.group(1)}" if m else ""
    if len(trace) < 3:
        return ""
    location = re.compile(r'^\s+File "([^"]+).*line (\d+).*\sin (.*)$')
    frames = ""
    for line in trace:
        m = location.match(line)
        if m:
            frames += (
                f":{m.group(3)}" if m.group(3) != "<module>" else f":{m.group(1)}@{m.group(2)}"
            )
    name = trace[-1].split(":")[0]
    if qualifier is not None:
        name += f"({qualifier})"
    return f"{path}:{name}{frames}"


def _signal_signature(path: str, signal: str, top: str) -> str:
    function = re.compile(r"^(?:([\w:~]+).*|(<signal handler called>)\s*)$")
    lines = top.splitlines()
    if len(lines) < 2:
        return ""
    signature = f"{path}:{signal}"
    for line in lines:
        m = function.match(line)
        if not m:
            return ""  # "??": an unknown function does not make a signature
        signature += ":" + (m.group(1) or m.group(2))
    return signature


def replay_key(system_id: str, document: dict[str, str], body: bytes) -> str:
    parts = [document.get(k, "") for k in ("Date", "ExecutablePath", "ProcStatus")]
    if all(parts):
        seed = f"{system_id}\n" + ":".join(parts)
        return hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()
    return hashlib.sha256(system_id.encode() + b"\n" + body).hexdigest()


def parse(system_id: str, body: bytes) -> IntakeReport:
    """The kept fields of a whoopsie report, or Refused with daisy's answer."""
    document = decode(body)
    if "KernelCrash" in document or "VmCore" in document:
        raise Refused(400, "Kernel crashes are not handled yet.")
    package_line = _text(document, "Package", MAX_NAME + MAX_VERSION + 200, None)
    if not package_line:
        raise Refused(400, "Incomplete crash report.")
    package, version = split_package(package_line)
    if not version:
        raise Refused(400, "Package has no version: the report cannot be judged.")
    if len(package) > MAX_NAME or not _PACKAGE_NAME_RE.match(package):
        raise Refused(400, "Package is not a valid package name.")
    if len(version) > MAX_VERSION or not _VERSION_RE.match(version):
        raise Refused(400, "Package's version is not a valid version.")
    source = split_package(_text(document, "SourcePackage", MAX_NAME + MAX_VERSION, None))[0]
    if source and (len(source) > MAX_NAME or not _PACKAGE_NAME_RE.match(source)):
        raise Refused(400, "SourcePackage is not a valid package name.")
    release = _text(document, "DistroRelease", MAX_SHORT, _RELEASE_RE)
    if not release:
        raise Refused(400, "DistroRelease is missing.")
    problem_type = _text(document, "ProblemType", 40, _PROBLEM_TYPE_RE) or "Crash"
    signature = signature_of(document)
    if len(signature) > MAX_SIGNATURE:
        raise Refused(400, f"The report's signature is longer than {MAX_SIGNATURE} characters.")
    if not signature:
        raise Refused(400, "The report has no signature to bucket it by.")
    if "\x00" in signature:
        raise Refused(400, "The report's signature holds a NUL byte.")
    return IntakeReport(
        package=package,
        version=version,
        source_package=source or package,
        release=release,
        architecture=_text(document, "Architecture", 20, _ARCH_RE),
        problem_type=problem_type,
        executable_path=_text(document, "ExecutablePath", MAX_PATH, None),
        signature=signature,
        date=_text(document, "Date", 60, None),
        dependencies=dependencies_of(document.get("Dependencies", "")),
        replay_key=replay_key(system_id, document, body),
    )
