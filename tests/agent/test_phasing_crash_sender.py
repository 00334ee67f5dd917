"""The crash sender reads apport's reports as whoopsie does: whoopsie's own test cases
(src/tests/data/crash/ and test_parse_report.c), rewritten here case by case."""

from __future__ import annotations

import hashlib
import os

import bson
import pytest
from django.core.cache import cache

from agent import phasing_crash_sender as sender
from overview.models import ReceivedCrash

ENVIRON = (
    b"ProcEnviron:\n LANGUAGE=en_US:en\n LC_CTYPE=en_US.UTF-8\n LC_COLLATE=en_US.UTF-8\n"
    b" PATH=(custom, user)\n LANG=en_US.UTF-8\n LC_MESSAGES=en_US.UTF-8\n SHELL=/bin/bash\n"
)
ENVIRON_VALUE = (
    b"LANGUAGE=en_US:en\nLC_CTYPE=en_US.UTF-8\nLC_COLLATE=en_US.UTF-8\nPATH=(custom, user)\n"
    b"LANG=en_US.UTF-8\nLC_MESSAGES=en_US.UTF-8\nSHELL=/bin/bash"
)
VALID = (
    b"ProblemType: Crash\nArchitecture: amd64\nDate: Thu Feb  2 17:09:31 2012\n"
    + ENVIRON
    + b"Uname: Linux 3.2.0-12-generic x86_64\n"
)

# whoopsie's test cases: name, report file, and what parse_report gives or its error.
ACCEPTED = {
    "valid": (VALID, {b"ProcEnviron": ENVIRON_VALUE, b"Date": b"Thu Feb  2 17:09:31 2012"}),
    "valid_empty_value": (
        b"ProblemType: Crash\nProcEnviron: \nProcMaps:\n 004...\n",
        {b"ProblemType": b"Crash", b"ProcMaps": b"004...", b"ProcEnviron": b""},
    ),
    "invalid_value2": (
        VALID.replace(b" LC_CTYPE=", b" LC_CTYPE\r="),
        {b"ProcEnviron": ENVIRON_VALUE.replace(b"LC_CTYPE=", b"LC_CTYPE?=")},
    ),
    "invalid_key_special_chars": (VALID.replace(b"Crash", b"Cr\rash"), {b"ProblemType": b"Cr?ash"}),
    "invalid_value_embedded_nul": (
        VALID.replace(b"Crash", b"Cr\x00ash"),
        {b"ProblemType": b"Cr?ash"},
    ),
    # A key whoopsie does not send, once its NUL is replaced: left out, the rest sent.
    "invalid_key_embedded_nul": (
        VALID.replace(b"ProblemType", b"Probl\x00emType"),
        {b"Architecture": b"amd64"},
    ),
    "invalid_trailing2": (
        VALID[: VALID.index(b"Uname")].rstrip(b"\n"),
        {b"ProcEnviron": ENVIRON_VALUE},
    ),
    "unicode": (
        "ProblemType: Crash\nProcCmdline: gedit ♥\n".encode(),
        {b"ProcCmdline": "gedit ♥".encode()},
    ),
}
REFUSED = {
    "invalid_key_no_value": (b"ProblemType\n" + VALID[19:], "Report key must have a value."),
    "invalid_key_no_value2": (b"ProblemType:\n" + VALID[19:], "Report key must have a value."),
    "invalid_key_leading_spaces": (b"  " + VALID, "Report may not start with a value."),
    "invalid_key_leading_spaces2": (b" " + VALID, "Report may not start with a value."),
    "invalid_no_spaces": (
        b"ProblemType:Crash\nProcEnviron:\nLANGUAGE=en_US:en\n",
        "Report key must have a value.",
    ),
    "invalid_value": (
        b"ProblemType: Crash\n\nArchitecture: amd64\n",
        "Report key must have a value.",
    ),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_it_reads_what_whoopsie_reads(tmp_path, name):
    text, expected = ACCEPTED[name]
    path = tmp_path / f"{name}.crash"
    path.write_bytes(text)
    report = sender.parse_report(path)
    for key, value in expected.items():
        assert report[key] == value


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_it_refuses_what_whoopsie_refuses(tmp_path, name):
    text, message = REFUSED[name]
    path = tmp_path / f"{name}.crash"
    path.write_bytes(text)
    with pytest.raises(sender.ReportError, match=message):
        sender.parse_report(path)


def test_a_symlink_or_a_directory_is_refused(tmp_path):
    (tmp_path / "passwd").write_text("root:x:0:0::/root:/bin/bash\n")
    os.symlink(tmp_path / "passwd", tmp_path / "invalid_symlink.crash")
    (tmp_path / "invalid-file-is-dir.crash").mkdir()
    for name in ("invalid_symlink.crash", "invalid-file-is-dir.crash"):
        with pytest.raises(sender.ReportError, match="is a symlink or is not a regular file"):
            sender.parse_report(tmp_path / name)


def test_only_whoopsies_fields_are_sent_and_never_the_core_dump(tmp_path):
    path = tmp_path / "r.crash"
    path.write_bytes(VALID + b"Title: secret\nCoreDump: base64\n H4sICAAAAAAC/0NvcmVEdW1wAA==\n")
    report = sender.parse_report(path)
    assert b"Title" not in report
    document = bson.decode(sender.bson_of(report))
    assert "CoreDump" not in document
    assert document["ProcEnviron"] == ENVIRON_VALUE.decode()
    assert all(isinstance(v, str) for v in document.values())


def test_the_system_id_is_the_sha512_of_the_product_uuid(tmp_path):
    uuid = tmp_path / "product_uuid"
    uuid.write_text("DEADBEEF-1234-1234-1234-DEADBEEF1234\n")
    expected = hashlib.sha512(b"DEADBEEF-1234-1234-1234-DEADBEEF1234").hexdigest()
    assert sender.system_id(uuid) == expected
    machine_id = tmp_path / "machine-id"
    machine_id.write_text("0123456789abcdef0123456789abcdef\n")
    assert (
        sender.system_id(tmp_path / "missing", machine_id)
        == hashlib.sha512(b"0123456789abcdef0123456789abcdef").hexdigest()
    )


PACKAGE_CRASH = (
    b"ProblemType: Crash\nArchitecture: amd64\nDate: Thu Dec  3 11:00:00 2026\n"
    b"DistroRelease: Ubuntu 24.04\nPackage: tool 1.2-1ubuntu0.1\nSourcePackage: tool\n"
    b"ExecutablePath: /usr/bin/tool\nSignal: 11\nProcStatus:\n Name:\ttool\n Pid:\t42\n"
    b"StacktraceTop:\n crash_here () from /usr/lib/libtool.so\n main ()\n"
    b"ProcCmdline: tool --password hunter2\n"
)


@pytest.mark.django_db(transaction=True)
def test_it_posts_to_the_intake_as_whoopsie_does_and_marks_what_is_handled(live_server, tmp_path):
    cache.clear()
    crash_dir = tmp_path / "crash"
    crash_dir.mkdir()
    (crash_dir / "_usr_bin_tool.0.crash").write_bytes(PACKAGE_CRASH)
    (crash_dir / "_usr_bin_other.0.crash").write_bytes(
        PACKAGE_CRASH.replace(b" 1.2-1ubuntu0.1", b"")
    )
    (crash_dir / "broken.crash").write_bytes(b" starts with a value\n")
    uuid = tmp_path / "product_uuid"
    uuid.write_text("DEADBEEF-1234-1234-1234-DEADBEEF1234")
    args = [
        "--url",
        live_server.url,
        "--crash-dir",
        str(crash_dir),
        "--system-uuid-file",
        str(uuid),
    ]

    assert sender.main(args) == 0

    crash = ReceivedCrash.objects.get()
    assert crash.system_id == sender.system_id(uuid)
    assert crash.fields["Signature"] == "/usr/bin/tool:11:crash_here:main"
    assert "hunter2" not in repr(crash.fields)
    # Sent and answered 200, refused with 400, or unparseable: each handled, never resent.
    assert sorted(p.name for p in crash_dir.glob("*.uploaded")) == [
        "_usr_bin_other.0.uploaded",
        "_usr_bin_tool.0.uploaded",
        "broken.uploaded",
    ]
    assert sender.main(args) == 0
    assert ReceivedCrash.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_an_answer_to_try_later_leaves_the_report_for_the_next_run(live_server, tmp_path):
    cache.clear()
    path = tmp_path / "r.crash"
    path.write_bytes(PACKAGE_CRASH)
    uuid = tmp_path / "product_uuid"
    uuid.write_text("DEADBEEF-1234-1234-1234-DEADBEEF1234")
    system = sender.system_id(uuid)
    assert "OOPSID" in sender.send_report(path, url=live_server.url, system=system, timeout=10)
    path.with_suffix(".uploaded").unlink()
    # The same crash again: 409, as daisy answers; whoopsie keeps such a report.
    outcome = sender.send_report(path, url=live_server.url, system=system, timeout=10)
    assert "409" in outcome
    assert not path.with_suffix(".uploaded").exists()
