"""Reading whoopsie's report as daisy reads it: the kept fields, the signatures, the refusals."""

from __future__ import annotations

import bson
import pytest

from overview.evidence import intake

SYSTEM = "d78abb0542736865f94704521609c230dac03a2f369d043ac212d6933b91410e06399e37f9c5cc88436a31737330c1c8eccb2c2f9f374d62f716432a32d50fac"  # noqa: E501


def python_crash(**fields: str) -> dict[str, str]:
    report = {
        "ProblemType": "Crash",
        "InterpreterPath": "/usr/bin/python",
        "ExecutablePath": "/usr/bin/foo",
        "DistroRelease": "Ubuntu 24.04",
        "Package": "ubiquity 2.34",
        "SourcePackage": "ubiquity",
        "Architecture": "amd64",
        "Date": "Thu Dec  3 11:00:00 2026",
        "Traceback": (
            "Traceback (most recent call last):\n"
            '  File "/usr/bin/foo", line 1, in <module>\n'
            "    sys.exit(1)"
        ),
        "ProcEnviron": "LANG=en_GB.UTF-8\nSHELL=/bin/bash",
        "ProcCmdline": "/usr/bin/foo --secret",
        "ProcStatus": "Name:\tfoo\nPid:\t4242",
        "Dependencies": "libc6 2.39-0ubuntu8.3\npython3 3.12.3-0ubuntu2 [origin: Ubuntu]\nbroken",
    }
    report.update(fields)
    return report


def test_a_python_crash_is_bucketed_as_daisy_buckets_it():
    report = intake.parse(SYSTEM, bson.encode(python_crash()))
    # daisy's test_python_submission expects exactly this bucket.
    assert report.signature == "/usr/bin/foo:    sys.exit(1):/usr/bin/foo@1"
    assert (report.package, report.version, report.source_package) == (
        "ubiquity",
        "2.34",
        "ubiquity",
    )
    assert report.release == "Ubuntu 24.04"


def test_only_the_allow_listed_fields_are_kept():
    fields = intake.parse(SYSTEM, bson.encode(python_crash())).as_fields()
    assert set(fields) == {
        "Package",
        "SourcePackage",
        "DistroRelease",
        "Architecture",
        "ProblemType",
        "ExecutablePath",
        "Signature",
        "Date",
        "Dependencies",
    }
    assert "secret" not in repr(fields) and "LANG" not in repr(fields)
    # Dependencies keep each package's version; a line without one is left out.
    assert fields["Dependencies"] == {"libc6": "2.39-0ubuntu8.3", "python3": "3.12.3-0ubuntu2"}


def test_a_duplicate_signature_wins_and_an_install_failure_keeps_its_bucket():
    report = intake.parse(
        SYSTEM,
        bson.encode(
            {
                "ProblemType": "Package",
                "Package": "tool 1.2-1ubuntu0.1",
                "SourcePackage": "tool",
                "DistroRelease": "Ubuntu 24.04",
                "DuplicateSignature": "package:tool:1.2-1ubuntu0.1:subprocess installed "
                "post-installation script returned error exit status 1",
            }
        ),
    )
    assert report.problem_type == "Package"
    assert report.signature.startswith("package:tool:1.2-1ubuntu0.1:")


def test_a_binary_crash_is_bucketed_by_its_address_signature_else_its_top_functions():
    binary = {
        "ProblemType": "Crash",
        "ExecutablePath": "/usr/bin/foo",
        "Package": "whoopsie 1.2.3",
        "DistroRelease": "Ubuntu 24.04",
        "StacktraceTop": "raise () from /lib/libc.so.6\nabort () from /lib/libc.so.6",
        "Signal": "11",
    }
    sas = "/usr/bin/foo:11:x86_64/lib/x86_64-linux-gnu/libc-2.15.so+e4d93:/usr/bin/foo+1e071"
    assert intake.signature_of({**binary, "StacktraceAddressSignature": sas}) == sas
    assert intake.signature_of(binary) == "/usr/bin/foo:11:raise:abort"
    assert intake.signature_of({**binary, "StacktraceTop": "?? ()\n?? ()"}) == ""


@pytest.mark.parametrize(
    "body",
    [b"", b"not bson at all", bson.encode(python_crash())[:-7], b"\x05\x00\x00\x00\x00\x00"],
    ids=["empty", "not BSON", "truncated", "trailing bytes"],
)
def test_a_body_it_cannot_read_is_refused_with_400(body):
    with pytest.raises(intake.Refused) as refused:
        intake.parse(SYSTEM, body)
    assert refused.value.status == 400


def test_a_value_that_is_not_a_string_is_refused():
    with pytest.raises(intake.Refused, match="is not a string") as refused:
        intake.parse(SYSTEM, bson.encode({**python_crash(), "Signal": 11}))
    assert refused.value.status == 400


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"Package": "ubiquity"}, "no version"),
        ({"Package": "ubiquity (not installed)"}, "no version"),
        ({"Package": ""}, "Incomplete"),
        ({"Package": "x" * 101 + " 1.0"}, "not a valid package name"),
        ({"Package": "ubiquity " + "1" * 201}, "not a valid version"),
        ({"Package": "ubiquity 2.34; rm -rf"}, "not a valid version"),
        ({"DistroRelease": "Ubuntu " + "9" * 200}, "DistroRelease is longer"),
        ({"DistroRelease": ""}, "DistroRelease is missing"),
        ({"Architecture": "amd64\nx"}, "Architecture is not valid"),
        ({"ExecutablePath": "/" + "a" * 600}, "ExecutablePath is longer"),
        ({"DuplicateSignature": "s" * 1001}, "signature is longer"),
        ({"Traceback": "", "ExecutablePath": ""}, "no signature"),
        ({"KernelCrash": "yes"}, "Kernel crashes"),
    ],
)
def test_fields_out_of_their_bounds_are_refused_with_400(fields, why):
    with pytest.raises(intake.Refused, match=why) as refused:
        intake.parse(SYSTEM, bson.encode(python_crash(**fields)))
    assert refused.value.status == 400


def test_a_replay_is_the_same_crash_and_another_crash_is_not():
    first = intake.parse(SYSTEM, bson.encode(python_crash()))
    again = intake.parse(SYSTEM, bson.encode(python_crash(ProcEnviron="LANG=C")))
    later = intake.parse(SYSTEM, bson.encode(python_crash(Date="Thu Dec  3 11:00:01 2026")))
    other_system = intake.parse("e" * 128, bson.encode(python_crash()))
    assert first.replay_key == again.replay_key
    assert len({first.replay_key, later.replay_key, other_system.replay_key}) == 3


def test_a_system_id_is_128_hex_digits():
    assert intake.valid_system_id(SYSTEM)
    assert not intake.valid_system_id("z" * 128)
    assert not intake.valid_system_id(SYSTEM[:-1])
