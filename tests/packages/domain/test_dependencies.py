"""Which update in phasing needs which: relations read as apt's Packages files write them."""

from __future__ import annotations

import io

import pytest
from debian import deb822

from packages.domain.dependencies import (
    Member,
    Relation,
    effective_share,
    machine_share,
    needed_by,
    needs_of,
    relations_of_stanza,
)

# Stanzas as noble-updates' Packages files carry them (trimmed to the fields read).
GNOME_SHELL = """\
Package: gnome-shell
Architecture: amd64
Version: 46.0-0ubuntu6~24.04.4
Source: gnome-shell
Depends: libc6 (>= 2.34), libmutter-14-0 (>= 46.2), gir1.2-mutter-14 (>= 46.2), gnome-shell-common (= 46.0-0ubuntu6~24.04.4), evolution-data-server (>= 3.33.1) | gnome-settings-daemon
Pre-Depends: init-system-helpers (>= 1.54~)
Breaks: gdm3 (<< 3.24.0), gnome-shell-extension-ubuntu-dock (<< 72~)
Conflicts: gnome-shell-extension-appindicator
Phased-Update-Percentage: 30
"""
LIBSSL_DEV = """\
Package: libssl-dev
Architecture: amd64
Version: 3.0.13-0ubuntu3.5
Multi-Arch: same
Source: openssl
Depends: libssl3t64 (= 3.0.13-0ubuntu3.5)
"""


def stanza(text):
    return next(deb822.Packages.iter_paragraphs(io.StringIO(text), use_apt_pkg=False))


def member(
    pk, source, version, previous, binaries=(), relations=(), percentage=10, state="phasing"
):
    return Member(
        pk, 1, source, version, previous, tuple(binaries), tuple(relations), percentage, state
    )


def test_it_reads_the_versioned_relations_of_a_real_stanza_and_leaves_out_the_rest():
    relations = relations_of_stanza(stanza(GNOME_SHELL))

    assert sorted(relations) == sorted(
        [
            Relation("pre-depends", "gnome-shell", "init-system-helpers", ">=", "1.54~"),
            Relation("depends", "gnome-shell", "libc6", ">=", "2.34"),
            Relation("depends", "gnome-shell", "libmutter-14-0", ">=", "46.2"),
            Relation("depends", "gnome-shell", "gir1.2-mutter-14", ">=", "46.2"),
            Relation("depends", "gnome-shell", "gnome-shell-common", "=", "46.0-0ubuntu6~24.04.4"),
            Relation("breaks", "gnome-shell", "gdm3", "<<", "3.24.0"),
            Relation("breaks", "gnome-shell", "gnome-shell-extension-ubuntu-dock", "<<", "72~"),
        ]
    )  # no alternatives ("a | b": apt may take the other), nothing unversioned


def test_an_unreadable_relation_field_costs_only_itself():
    broken = stanza(
        LIBSSL_DEV.replace("Depends: libssl3t64 (= 3.0.13-0ubuntu3.5)", "Depends: (((")
        + "Breaks: libssl3 (<< 3.0.13)\n"
    )

    assert relations_of_stanza(broken) == [
        Relation("breaks", "libssl-dev", "libssl3", "<<", "3.0.13")
    ]


def test_a_depends_on_the_new_version_of_another_update_in_phasing_needs_it():
    mutter = member(
        1, "mutter", "46.2-1ubuntu0.24.04.1", "46.0-1ubuntu9", ["mutter", "libmutter-14-0"]
    )
    shell = member(
        2,
        "gnome-shell",
        "46.0-0ubuntu6~24.04.4",
        "46.0-0ubuntu6~24.04.3",
        ["gnome-shell"],
        relations_of_stanza(stanza(GNOME_SHELL)),
    )

    needs = needs_of([mutter, shell])

    assert [(n.needed.source, n.breaks) for n in needs[2]] == [("mutter", False)]
    assert needs[2][0].why == "gnome-shell Depends on libmutter-14-0 (>= 46.2)"
    assert 1 not in needs
    assert [n.dependent.source for n in needed_by(needs)[1]] == ["gnome-shell"]


# A version the previous one already satisfies, and one that is no version at all (asked
# twice: the second answer is the one the first comparison left remembered).
@pytest.mark.parametrize("wanted", ["46.2", "46.3 beta"])
def test_a_depends_the_previous_version_already_satisfies_or_on_no_version_is_no_need(wanted):
    mutter = member(1, "mutter", "46.3-1", "46.2-1", ["libmutter-14-0"])
    shell = member(
        2,
        "gnome-shell",
        "46.1-1",
        "46.0-1",
        ["gnome-shell"],
        [Relation("depends", "gnome-shell", "libmutter-14-0", ">=", wanted)],
    )

    assert needs_of([mutter, shell]) == {}
    assert needs_of([mutter, shell]) == {}


def test_a_breaks_of_the_old_version_needs_the_new_one():
    netplan = member(
        1, "netplan.io", "1.1.2-2~ubuntu24.04.1", "1.0-2ubuntu1.2", ["netplan.io", "libnetplan1"]
    )
    systemd = member(
        2,
        "systemd",
        "255.4-1ubuntu8.6",
        "255.4-1ubuntu8.5",
        ["systemd"],
        [Relation("breaks", "systemd", "netplan.io", "<<", "1.1~")],
    )

    need = needs_of([netplan, systemd])[2][0]

    assert need.breaks and need.needed.source == "netplan.io"
    assert need.why == "systemd Breaks netplan.io (<< 1.1~)"


def test_a_breaks_the_new_version_does_not_clear_is_no_need():
    netplan = member(1, "netplan.io", "1.0-2ubuntu1.3", "1.0-2ubuntu1.2", ["netplan.io"])
    systemd = member(
        2,
        "systemd",
        "255.4-1ubuntu8.6",
        "255.4-1ubuntu8.5",
        ["systemd"],
        [Relation("breaks", "systemd", "netplan.io", "<<", "1.1~")],
    )

    assert needs_of([netplan, systemd]) == {}


def test_binaries_of_the_same_source_and_of_another_release_are_never_a_need():
    openssl = member(
        1,
        "openssl",
        "3.0.13-0ubuntu3.5",
        "3.0.13-0ubuntu3.4",
        ["libssl3t64", "libssl-dev"],
        relations_of_stanza(stanza(LIBSSL_DEV)),
    )
    other_release = Member(
        2,
        2,
        "curl",
        "8.5-1",
        "8.4-1",
        ("curl",),
        (Relation("depends", "curl", "libssl3t64", ">=", "3.0.13-0ubuntu3.5"),),
        10,
        "phasing",
    )

    assert needs_of([openssl, other_release]) == {}


@pytest.mark.parametrize(("percentage", "share"), [(0, 1 / 101), (10, 11 / 101), (100, 1.0)])
def test_a_percentage_takes_the_machines_whose_draw_is_at_most_it(percentage, share):
    assert machine_share(percentage) == pytest.approx(share)


def test_the_effective_share_is_the_product_of_the_independent_draws_of_the_whole_chain():
    b = member(1, "b", "2", "1", ["libb"], percentage=20)
    a = member(
        2, "a", "2", "1", ["liba"], [Relation("depends", "a", "libb", ">=", "2")], percentage=50
    )
    c = member(
        3, "c", "2", "1", ["c"], [Relation("depends", "c", "liba", ">=", "2")], percentage=50
    )

    needs = needs_of([a, b, c])

    assert effective_share(c, needs) == pytest.approx((51 / 101) * (51 / 101) * (21 / 101))
    assert effective_share(b, needs) == pytest.approx(21 / 101)
