"""The bench's memory figures are the measured process's own."""

from __future__ import annotations

import subprocess
import sys

from bench.env import peak_rss_mib, peak_rss_reset, rss_mib

CHILD = "from bench.env import peak_rss_mib; print(peak_rss_mib())"


def test_a_process_the_bench_starts_reports_its_own_peak_not_the_bench_s():
    held = bytearray(300 * 1024 * 1024)  # the bench after its pages run, say
    held[::4096] = b"\1" * len(held[::4096])
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=60
    )
    assert float(out.stdout) < 200
    assert peak_rss_mib() >= 300


def test_a_reset_peak_starts_again_from_what_the_process_holds_now():
    before = rss_mib()
    passing = bytearray(200 * 1024 * 1024)  # an earlier tick's
    passing[::4096] = b"\1" * len(passing[::4096])
    del passing
    assert peak_rss_mib() >= before + 200
    peak_rss_reset()
    assert peak_rss_mib() < before + 50
