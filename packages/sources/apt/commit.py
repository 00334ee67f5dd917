"""Changing the files of an apt suite as one step: all old or all new, never half.

A Release file lists the size and hashes of every index; indexes that no longer match it
make apt (and our reader) refuse the whole suite. Replacing the indexes and then the
Release one by one leaves that state behind when the writer stops in between (killed,
disk full, an I/O error, a Release it may not replace), and every later sync and
write-back of the suite then fails, so a halt's 0% never reaches the archive.

So a change is committed like this, in the suite's own directory (same file system, so
every rename is atomic):

1. every new file is written beside its target and flushed (``.<name>.<token>.new``);
   a failure here changes nothing;
2. a journal (``.phasing-commit``) names the targets, and each existing target gets a
   hard link to its old content (``.<name>.<token>.old``);
3. the new files are renamed over their targets, the Release files last;
4. the backups and the journal are removed.

A failure in step 3 puts the old files back at once; a writer that died there leaves the
journal, and the next reader or writer of the suite (``suite_recover``, under the suite
lock) puts the old files back the same way. A writer that died in step 4, after every
rename, left a suite that is all new already: the recovery rolls it forward (removes what
is left of the backups) and never puts an old file back over a new one. Nothing here
imports Django.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from packages.sources.apt import names as apt_names

JOURNAL = ".phasing-commit"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _aside(target: Path, token: str, kind: str) -> Path:
    return target.with_name(f".{target.name}.{token}.{kind}")


def _stage(target: Path, data: bytes, token: str) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = _aside(target, token, "new")
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(temp, mode)
    return temp


def suite_commit(suite_dir: Path, files: Mapping[str, bytes]) -> None:
    """Replace ``files`` (paths relative to the suite, in the order given: the Release
    files last) so that the suite is all old or all new whatever happens."""
    suite_dir = Path(suite_dir).resolve()
    token = secrets.token_hex(6)
    # Every target stays under the suite, whatever names reached here.
    targets = [apt_names.inside(suite_dir, relative) for relative in files]
    staged: list[tuple[Path, Path]] = []
    try:
        for target, data in zip(targets, files.values(), strict=True):
            staged.append((_stage(target, data, token), target))
    except BaseException:
        for target in targets:
            with contextlib.suppress(FileNotFoundError):
                _aside(target, token, "new").unlink()
        raise
    entries = [
        {"path": str(target.relative_to(suite_dir)), "existed": target.exists()}
        for _, target in staged
    ]
    journal = suite_dir / JOURNAL
    journal.write_text(json.dumps({"token": token, "files": entries}), encoding="utf-8")
    _fsync_dir(suite_dir)
    try:
        for _, target in staged:
            if target.exists():
                os.link(target, _aside(target, token, "old"))
        for temp, target in staged:
            os.replace(temp, target)
        for directory in {target.parent for _, target in staged} | {suite_dir}:
            _fsync_dir(directory)
    except BaseException:
        suite_recover(suite_dir)
        raise
    for _, target in staged:
        with contextlib.suppress(FileNotFoundError):
            _aside(target, token, "old").unlink()
    journal.unlink()
    _fsync_dir(suite_dir)


def suite_recover(suite_dir: Path) -> bool:
    """Finish a commit that did not, if one left its journal; True when it did.

    After every rename (no staged file left) it rolls forward: the suite is all new, and
    only the backups go. Before, it rolls back: every target whose old content was kept
    gets it back, a target the commit was creating is removed, staged files are deleted,
    and the suite is as before the commit.
    """
    suite_dir = Path(suite_dir).resolve()
    journal = suite_dir / JOURNAL
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except ValueError:
        # A journal cut short was written before any file was touched.
        journal.unlink()
        return True
    token = record["token"]
    targets = [apt_names.inside(suite_dir, entry["path"]) for entry in record["files"]]
    if not any(_aside(target, token, "new").exists() for target in targets):
        # Every rename was done (step 4): the suite is all new. Roll forward.
        for target in targets:
            with contextlib.suppress(FileNotFoundError):
                _aside(target, token, "old").unlink()
        journal.unlink()
        _fsync_dir(suite_dir)
        return True
    for entry in record["files"]:
        # A journal is ours, but a path in it never leads out of the suite.
        target = apt_names.inside(suite_dir, entry["path"])
        backup = _aside(target, token, "old")
        if backup.exists() and target.exists() and os.path.samefile(backup, target):
            backup.unlink()  # never replaced: the target is still the old file
        elif backup.exists():
            os.replace(backup, target)
        elif not entry["existed"]:
            with contextlib.suppress(FileNotFoundError):
                target.unlink()
        with contextlib.suppress(FileNotFoundError):
            _aside(target, token, "new").unlink()
    _fsync_dir(suite_dir)
    journal.unlink()
    _fsync_dir(suite_dir)
    return True
