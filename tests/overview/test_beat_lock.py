"""phasing_beat through a database blip: beat stops while the lock is lost, then the
lock is taken again and beat runs again; the supervisor itself never exits."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from overview.beat_lock import BeatSupervisor


class Database:
    """Up or down, and who holds the advisory lock."""

    def __init__(self):
        self.up = True
        self.holder = None
        self.polls = 0


class Connection:
    def __init__(self, db: Database):
        if not db.up:
            raise OSError("connection refused")
        self.db = db
        self.result = None

    @contextmanager
    def cursor(self):
        yield self

    def execute(self, sql, params=None):
        if not self.db.up:
            raise OSError("server closed the connection unexpectedly")
        if "advisory" in sql:
            if self.db.holder in (None, self):
                self.db.holder = self
            self.result = (self.db.holder is self,)

    def fetchone(self):
        return self.result

    def close(self):
        if self.db.holder is self:
            self.db.holder = None


class FakeBeat:
    def __init__(self, log, stop_after=None):
        self.log, self.running, self.polls, self.stop_after = log, True, 0, stop_after

    def poll(self):
        self.polls += 1
        if self.stop_after is not None and self.polls >= self.stop_after:
            self.running = False
            return 0
        return None

    def terminate(self):
        self.running = False
        self.log.append("terminated")

    def wait(self, timeout=None):
        return 0


def test_a_database_blip_stops_beat_then_retakes_the_lock_and_runs_beat_again():
    db = Database()
    log: list[str] = []
    beats: list[FakeBeat] = []
    sleeps: list[float] = []

    def sleep(seconds):
        sleeps.append(seconds)
        db.polls += 1
        # Down on the 3rd sleep (while beat runs), back up three sleeps later.
        if db.polls == 3:
            db.up, db.holder = False, None
        if db.polls == 6:
            db.up = True

    def start_beat():
        assert not any(b.running for b in beats), "two beats at once"
        beat = FakeBeat(log, stop_after=3 if beats else None)
        beats.append(beat)
        log.append("started")
        return beat

    status = BeatSupervisor(
        connect=lambda: Connection(db), start_beat=start_beat, sleep=sleep, say=log.append
    ).run()

    assert status == 0  # the second beat stopped by itself; the blip ended nothing
    assert [entry for entry in log if entry in ("started", "terminated")] == [
        "started",
        "terminated",
        "started",
    ]
    assert any("lost the beat lock" in entry for entry in log)
    assert any("retrying in 1 s" in entry for entry in log)
    assert any("retrying in 2 s" in entry for entry in log)


def test_a_second_beat_waits_while_the_first_holds_the_lock():
    db = Database()
    db.holder = object()  # another machine's beat
    log: list[str] = []

    def sleep(seconds):
        db.holder = None  # the other machine goes away

    beats = []
    status = BeatSupervisor(
        connect=lambda: Connection(db),
        start_beat=lambda: beats.append(FakeBeat(log, stop_after=1)) or beats[-1],
        sleep=sleep,
        say=log.append,
    ).run()

    assert status == 0 and len(beats) == 1
    assert "another beat runs; waiting to take over" in log


def test_with_no_wait_a_second_beat_exits_at_once():
    db = Database()
    db.holder = object()
    with pytest.raises(SystemExit, match="another beat holds the lock"):
        BeatSupervisor(
            connect=lambda: Connection(db),
            start_beat=lambda: pytest.fail("started"),
            sleep=lambda s: None,
            no_wait=True,
        ).run()


def test_a_stopped_supervisor_stops_its_beat_with_it():
    db = Database()
    log: list[str] = []
    beats: list[FakeBeat] = []

    def sleep(seconds):
        raise SystemExit(0)  # SIGTERM while beat runs

    with pytest.raises(SystemExit):
        BeatSupervisor(
            connect=lambda: Connection(db),
            start_beat=lambda: beats.append(FakeBeat(log)) or beats[-1],
            sleep=sleep,
            say=log.append,
        ).run()

    assert [b.running for b in beats] == [False]
