"""Text from people and sources printed on a terminal without its control characters."""

from __future__ import annotations

from packages.terminal import terminal_safe


def test_control_characters_are_written_as_escapes_and_the_rest_is_kept():
    assert terminal_safe("a\rb\nc\x1b[31md\x07\x9b") == "a\\rb\\nc\\x1b[31md\\x07\\x9b"
    assert terminal_safe("zsh 5.8 → 5.9, ünïcödé") == "zsh 5.8 → 5.9, ünïcödé"


def test_line_separators_and_bidi_overrides_are_escaped():
    assert terminal_safe("a\u2028b\u202ec") == "a\\u2028b\\u202ec"
