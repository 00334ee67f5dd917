"""apt's phased-update decision, reproduced bit for bit.

apt (2.1.16 and later) decides per machine whether to take a phased update. In apt's
``apt-pkg/upgrade.cc`` (``PhasedUpgrader::IsIgnoredPhasedUpdate``) and, behind
``APT::Get::Phase-Policy``, ``apt-pkg/policy.cc`` (``ExcludePhased``), the decision is::

    std::string seedStr = std::string(Ver.SourcePkgName()) + "-" + Ver.SourceVerStr()
                          + "-" + machineID;
    std::seed_seq seed(seedStr.begin(), seedStr.end());
    std::minstd_rand rand(seed);
    std::uniform_int_distribution<unsigned int> dist(0, 100);
    return dist(rand) > Ver.PhasedUpdatePercentage();   // true: keep the update back

(Debian/apt; since 2.7.11 it lives in ``apt-pkg/depcache.cc`` 2589-2594, behind
``pkgDepCache::PhasingApplied``, with the same seed, engine and distribution.) The machine
id is used verbatim (``machine_id_for_apt``).
So a machine takes the update when its draw is at most the percentage, and the draw is
also the smallest percentage at which the machine is in the phase.

The three standard-library pieces are as libstdc++ 12 (Debian bookworm's GCC) implements
them, read from ``/usr/include/c++/12/bits/random.h``, ``random.tcc`` and
``uniform_int_dist.h``:

- ``seed_seq(first, last)`` stores each element reduced mod 2**32. The elements are
  ``char`` values, and ``char`` is signed on amd64, so a byte >= 0x80 is sign-extended
  (0xC3 becomes 0xFFFFFFC3). ``seed_seq::generate`` is the C++11 [rand.util.seedseq]
  algorithm (``_seed_seq_generate`` below).
- ``minstd_rand`` is ``linear_congruential_engine<uint_fast32_t, 48271, 0, 2147483647>``.
  Seeding from a seed sequence generates ``k + 3`` words with ``k = (lg(m) + 31) / 32 = 1``
  and uses only the word at index 3; ``seed(s)`` stores ``s mod m`` (1 when that is 0).
  Each call advances ``x = 48271 * x mod m`` and returns ``x``; its range is [1, m - 1].
- ``uniform_int_distribution<unsigned int>(0, 100)`` with a generator whose range
  (m - 2) is neither 2**32 - 1 nor 2**64 - 1 takes the "fallback case (2 divisions)":
  ``scaling = range / 101``, ``past = 101 * scaling``; draw ``u = g() - 1`` until
  ``u < past``; the result is ``u // scaling``.

Nothing here imports Django.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# apt keeps no limit; a page and an API do.
MACHINE_ID_MAX_LENGTH = 200
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")

_MASK32 = 0xFFFFFFFF
_MINSTD_A = 48271
_MINSTD_M = 2147483647  # 2**31 - 1
_MINSTD_MIN = 1  # increment 0: the engine never yields 0
_MINSTD_MAX = _MINSTD_M - 1
_DRAW_LOW = 0
_DRAW_HIGH = 100


def machine_id_for_apt(text: str) -> str:
    """The machine id apt seeds with, from what a person gives: used exactly as it is.

    apt takes ``APT::Machine-ID`` verbatim when it is set (apt_preferences(5) tells fleets
    to set one UUID, with dashes), else the first line of /etc/machine-id with its line
    end (CR/LF) removed and nothing else (apt-pkg/aptconfiguration.cc 596-623,
    apt-pkg/contrib/fileutl.cc 2817-2822). So case and other spaces are kept: an
    upper-case id draws differently from its lower-case form, as it does in apt.
    """
    machine_id = text.split("\n", 1)[0].rstrip("\r\n")
    if not machine_id:
        raise ValueError(
            "Without a machine id apt does not phase at all: it installs every update. "
            "Give the first line of /etc/machine-id, or the APT::Machine-ID you set."
        )
    if len(machine_id) > MACHINE_ID_MAX_LENGTH:
        raise ValueError(f"A machine id here is at most {MACHINE_ID_MAX_LENGTH} characters.")
    if _CONTROL_RE.search(machine_id):
        raise ValueError("A machine id has no control characters (tabs, NUL...).")
    return machine_id


def _signed_char_values(text: str) -> list[int]:
    # std::string iterates over bytes as (signed, on amd64) char; seed_seq keeps each
    # value mod 2**32, so bytes >= 0x80 arrive sign-extended.
    return [(byte - 256) & _MASK32 if byte >= 0x80 else byte for byte in text.encode("utf-8")]


def _seed_seq_generate(values: list[int], count: int) -> list[int]:
    """``std::seed_seq::generate`` for ``count`` 32-bit words (libstdc++ random.tcc)."""
    if count == 0:
        return []
    state = _SeedSeqState(len(values), count)
    state.feed(values)
    return state.finish()


class _SeedSeqState:
    """``seed_seq::generate`` part way through its input, so that many seeds sharing a
    prefix ("<source>-<version>-", then a machine id) can resume after it: the loop over
    the input depends only on the input so far and on its total length."""

    def __init__(self, total: int, count: int) -> None:
        n = count
        if n >= 623:
            t = 11
        elif n >= 68:
            t = 7
        elif n >= 39:
            t = 5
        elif n >= 7:
            t = 3
        else:
            t = (n - 1) // 2
        self.n, self.s = n, total
        self.p = (n - t) // 2
        self.q = self.p + t
        self.m = max(total + 1, n)
        out = [0x8B8B8B8B] * n
        # k == 0: every element still equals 0x8b8b8b8b.
        r1 = 1371501266
        r2 = (r1 + total) & _MASK32
        out[self.p] = (out[self.p] + r1) & _MASK32
        out[self.q] = (out[self.q] + r2) & _MASK32
        out[0] = r2
        self.out = out
        self.k = 1

    def copy(self) -> _SeedSeqState:
        twin = object.__new__(_SeedSeqState)
        twin.__dict__.update(self.__dict__)
        twin.out = list(self.out)
        return twin

    def feed(self, values: list[int]) -> None:
        """The next input values (k <= s), or nothing further once they are all in."""
        out, n, p, q, s = self.out, self.n, self.p, self.q, self.s
        k = self.k
        for value in values:
            kn = k % n
            kpn = (k + p) % n
            kqn = (k + q) % n
            arg = out[kn] ^ out[kpn] ^ out[(k - 1) % n]
            r1 = (1664525 * (arg ^ (arg >> 27))) & _MASK32
            r2 = (r1 + kn + value) & _MASK32 if k <= s else (r1 + kn) & _MASK32
            out[kpn] = (out[kpn] + r1) & _MASK32
            out[kqn] = (out[kqn] + r2) & _MASK32
            out[kn] = r2
            k += 1
        self.k = k

    def finish(self) -> list[int]:
        out, n, p, q, m = self.out, self.n, self.p, self.q, self.m
        for k in range(self.k, m):  # past the input (when the output is longer than it)
            kn = k % n
            kpn = (k + p) % n
            kqn = (k + q) % n
            arg = out[kn] ^ out[kpn] ^ out[(k - 1) % n]
            r1 = (1664525 * (arg ^ (arg >> 27))) & _MASK32
            r2 = (r1 + kn) & _MASK32
            out[kpn] = (out[kpn] + r1) & _MASK32
            out[kqn] = (out[kqn] + r2) & _MASK32
            out[kn] = r2
        for k in range(m, m + n):
            kn = k % n
            kpn = (k + p) % n
            kqn = (k + q) % n
            arg = (out[kn] + out[kpn] + out[(k - 1) % n]) & _MASK32
            r3 = (1566083941 * (arg ^ (arg >> 27))) & _MASK32
            r4 = (r3 - kn) & _MASK32
            out[kpn] ^= r3
            out[kqn] ^= r4
            out[kn] = r4
        return out


# minstd_rand seeds itself with k = (lg(2**31 - 1) + 31) / 32 = 1 word, generated as
# k + 3 words; the first three are discarded.
_SEED_WORDS = 1 + 3


class _MinstdRand:
    """``std::minstd_rand`` seeded from a seed sequence (libstdc++ random.tcc)."""

    def __init__(
        self, seed_values: list[int] | None = None, *, words: list[int] | None = None
    ) -> None:
        if words is None:
            words = _seed_seq_generate(seed_values or [], _SEED_WORDS)
        state = words[3] % _MINSTD_M
        self._x = state if state != 0 else 1

    def __call__(self) -> int:
        self._x = (_MINSTD_A * self._x) % _MINSTD_M
        return self._x


def _uniform_0_100(engine: _MinstdRand) -> int:
    """``uniform_int_distribution<unsigned int>(0, 100)``, libstdc++'s two-division case."""
    engine_range = _MINSTD_MAX - _MINSTD_MIN
    wanted = _DRAW_HIGH - _DRAW_LOW + 1
    scaling = engine_range // wanted
    past = wanted * scaling
    while True:
        value = engine() - _MINSTD_MIN
        if value < past:
            return value // scaling + _DRAW_LOW


def phased_draw(source_package: str, source_version: str, machine_id: str) -> int:
    """This machine's draw (0..100) for one source version, exactly as apt computes it.

    ``source_version`` is the source version as apt knows it: the version in the
    binary's ``Source: name (version)`` field, or the binary version when absent,
    epoch included. ``machine_id`` is used as given (see ``machine_id_for_apt``).
    """
    seed_text = f"{source_package}-{source_version}-{machine_id}"
    return _uniform_0_100(_MinstdRand(_signed_char_values(seed_text)))


class Drawer:
    """apt's draw for many machines of one source version, resuming the seed after its
    shared "<source>-<version>-" prefix (the backtest draws hundreds of thousands)."""

    def __init__(self, source_package: str, source_version: str) -> None:
        self._prefix = _signed_char_values(f"{source_package}-{source_version}-")
        self._states: dict[int, _SeedSeqState] = {}

    def draw(self, machine_id: str) -> int:
        rest = _signed_char_values(machine_id)
        total = len(self._prefix) + len(rest)
        start = self._states.get(total)
        if start is None:
            start = self._states[total] = _SeedSeqState(total, _SEED_WORDS)
            start.feed(self._prefix)
        state = start.copy()
        state.feed(rest)
        return _uniform_0_100(_MinstdRand(words=state.finish()))


def is_included(draw: int, percentage: int) -> bool:
    """apt keeps the update back when the draw is above the percentage."""
    return draw <= percentage


@dataclass(frozen=True)
class Draw:
    draw: int
    included: bool
    # The smallest percentage at which this machine takes the update.
    included_from_percentage: int


def decide(source_package: str, source_version: str, machine_id: str, percentage: int) -> Draw:
    """Whether this machine takes the update at this percentage, and from which one on."""
    draw = phased_draw(source_package, source_version, machine_id)
    return Draw(draw=draw, included=is_included(draw, percentage), included_from_percentage=draw)
