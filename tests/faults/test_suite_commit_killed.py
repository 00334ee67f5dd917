"""A writer killed (os._exit, as by SIGKILL: no handler runs) at each step of an apt
suite commit: after the next recovery the suite is readable, all old or all new."""

from __future__ import annotations

import os
from pathlib import Path

from packages.sources.apt import commit as apt_commit
from packages.sources.apt.commit import JOURNAL, suite_commit, suite_recover
from packages.sources.apt.reader import AptArchiveReader
from packages.sources.apt.writer import file_hashes, release_text

NAMES = [f"main/binary-amd64/Packages{suffix}" for suffix in ("", ".gz", ".xz")] + [
    f"universe/binary-amd64/Packages{suffix}" for suffix in ("", ".gz", ".xz")
]


def _suite(root: Path, generation: str) -> dict[str, bytes]:
    files = {name: f"Package: p\nVersion: {generation}-{name}\n".encode() for name in NAMES}
    entries = {name: (len(data), file_hashes(data, ("SHA256",))) for name, data in files.items()}
    fields = [
        ("Suite", "noble-updates"),
        ("Components", "main universe"),
        ("Architectures", "amd64"),
    ]
    files["Release"] = release_text(fields, entries, ("SHA256",)).encode()
    return files


def _contents(suite_dir: Path) -> dict[str, bytes]:
    return {name: (suite_dir / name).read_bytes() for name in [*NAMES, "Release"]}


def _consistent(root: Path) -> None:
    """Every file the Release lists matches it, as apt checks."""
    reader = AptArchiveReader(location=str(root))
    suite = reader._load_suite("noble-updates")
    for name, listed in suite.listed.items():
        listed.check(name, (root / "dists" / "noble-updates" / name).read_bytes())


def _killed_at(step: int, suite_dir: Path, files: dict[str, bytes]) -> bool:
    """Run a commit in a child that exits at its `step`-th file operation; True if the
    commit finished before that step."""
    pid = os.fork()
    if pid == 0:  # the writer
        calls = 0

        def dies(real):
            def wrapper(*args, **kwargs):
                nonlocal calls
                calls += 1
                if calls == step:
                    os._exit(9)
                return real(*args, **kwargs)

            return wrapper

        apt_commit.os.replace = dies(os.replace)  # type: ignore[attr-defined]
        apt_commit.os.link = dies(os.link)  # type: ignore[attr-defined]
        Path.unlink = dies(Path.unlink)  # type: ignore[method-assign]
        try:
            suite_commit(suite_dir, files)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def test_a_writer_killed_at_any_step_leaves_a_suite_that_recovers_whole(tmp_path):
    old, new = _suite(tmp_path, "old"), _suite(tmp_path, "new")
    finished_at = None
    for step in range(1, 60):
        root = tmp_path / f"step{step}"
        suite_dir = root / "dists" / "noble-updates"
        suite_commit(suite_dir, old)
        if _killed_at(step, suite_dir, {**{n: new[n] for n in NAMES}, "Release": new["Release"]}):
            finished_at = step
            break
        suite_recover(suite_dir)

        assert not (suite_dir / JOURNAL).exists()
        assert _contents(suite_dir) in (old, new), f"torn after a kill at step {step}"
        _consistent(root)
        assert not [p.name for p in suite_dir.rglob(".*") if p.name != JOURNAL]
    assert finished_at is not None and finished_at > 2 * len(NAMES)
