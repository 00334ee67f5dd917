"""Text from people and sources made safe to print on a terminal.

A reason is typed by an admin or comes from a source; printed raw, a carriage return or
line feed forges a line of output, and an ANSI escape recolours, moves or clears the
screen. Control characters are written as Python escapes instead (``\\r``, ``\\x1b``),
so what was there stays readable and nothing is hidden. Plain Python, no Django.
"""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def terminal_safe(text: str) -> str:
    """`text` with every control character escaped (bidi overrides too), on one line."""
    escaped = _CONTROL.sub(_escape, text)
    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char) == "Cf" and unicodedata.bidirectional(char) in _BIDI
        else char
        for char in escaped
    )


# Explicit embeddings, overrides and isolates: they reorder what a terminal shows.
_BIDI = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
