"""The Launchpad bugs an upload closes, read as Launchpad reads them."""

from __future__ import annotations

from packages.domain.changelog import MAX_BUGS, closed_bugs

# An entry as Ubuntu's stable updates write them (systemd in noble-updates), a mention
# wrapped over two lines, and a Debian bug that Launchpad does not close.
SYSTEMD = """\
systemd (255.4-1ubuntu8.1) noble; urgency=medium

  [ Nick Rosbrook ]
  * debian/gbp.conf: set debian-branch=ubuntu-noble
  * d/p/lp2066054-network-fix-Reconfigure-with-reason.patch: restart networkd
    links correctly on reconfigure (LP:
    #2066054)
  * d/p/resolved-ordering.patch: order resolved after networkd
    (LP: #2061924, #2062072)
  * d/t/boot-and-services: skip a flaky check (Closes: #1069212)
  * Mention LP #999999 in passing, which Launchpad does not read as a closure.

 -- Nick Rosbrook <enr0n@ubuntu.com>  Thu, 23 May 2024 13:45:02 -0400
"""

# The same bugs as a .changes file lists them.
CHANGES = """\
Format: 1.8
Source: systemd
Version: 255.4-1ubuntu8.1
Distribution: noble
Launchpad-Bugs-Fixed: 2061924 2062072 2066054
Changes:
 systemd (255.4-1ubuntu8.1) noble; urgency=medium
 .
   * d/p/resolved-ordering.patch: order resolved after networkd (LP: #2061924)
"""


def test_it_reads_every_lp_mention_of_a_real_changelog_entry_in_order():
    assert closed_bugs(SYSTEMD) == (2066054, 2061924, 2062072)


def test_it_reads_the_launchpad_bugs_fixed_field_of_a_changes_file_once_each():
    assert closed_bugs(CHANGES) == (2061924, 2062072, 2066054)


def test_it_is_case_insensitive_and_ignores_debian_bugs_and_nonsense():
    assert closed_bugs("lp: #42 (Closes: #7) LP: #0 LP: #1234567890123") == (42,)
    assert closed_bugs("") == ()


def test_it_keeps_a_bounded_number_of_bugs():
    text = "(LP: " + ", ".join(f"#{n}" for n in range(1, 200)) + ")"
    assert len(closed_bugs(text)) == MAX_BUGS
