"""The Launchpad bugs an upload closes, from its changelog text or its .changes file.

Launchpad closes the bugs a changelog entry names as ``LP: #N`` (several as
``LP: #1, #2``), case-insensitive, as its upload processor reads them
(lp.soyuz's ``LP_BUG_RE`` in the changes file's ``Changes`` field), and writes them to
the .changes file as ``Launchpad-Bugs-Fixed: 1 2``. Plain Python, no Django.
"""

from __future__ import annotations

import re

# "LP: #123, #456": one mention, several bugs.
_MENTION = re.compile(r"lp:\s+\#\d+(?:,\s*\#\d+)*", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")
_FIELD = re.compile(r"^Launchpad-Bugs-Fixed:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
# Launchpad's bug numbers are positive and well below this; anything longer is noise.
_MAX_DIGITS = 9
MAX_BUGS = 50


def closed_bugs(text: str) -> tuple[int, ...]:
    """The bug numbers an upload closes, in first-mention order, without repeats."""
    found: dict[int, None] = {}
    numbers = [n for mention in _MENTION.findall(text) for n in _NUMBER.findall(mention)]
    for line in _FIELD.findall(text):
        numbers.extend(line.split())
    for number in numbers:
        if number.isdigit() and len(number) <= _MAX_DIGITS and int(number) > 0:
            found.setdefault(int(number))
    return tuple(found)[:MAX_BUGS]
