"""Dependent groups on the pages: the overview and the history show what an update needs
and the share of machines that can take it with it; the machine page and its API say when
apt keeps an update back because something it needs is not yet in this machine's phase."""

from __future__ import annotations

import pytest

from packages.domain import apt_phasing
from packages.holds import HoldReason
from packages.models import PhasingState
from tests.factories import PolicyFactory, PublicationFactory, ReleaseFactory, SourcePackageFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]

MACHINE_ID = "4c4c4544004a4d1080345ac04f565232"
SHELL = "46.0-0ubuntu6~24.04.4"


def version_drawn(name: str, *, included: bool, percentage: int) -> str:
    """A version whose draw for MACHINE_ID is (not) within `percentage`."""
    for n in range(1, 1000):
        version = f"46.2-1ubuntu0.{n}"
        if (apt_phasing.phased_draw(name, version, MACHINE_ID) <= percentage) == included:
            return version
    raise AssertionError("no such version")


def group(
    *,
    mutter_version="46.2-1ubuntu0.24.04.1",
    mutter_percentage=20,
    shell_percentage=20,
    shell_version=SHELL,
    kind="depends",
    operator=">=",
    **mutter,
):
    noble = ReleaseFactory()
    needed = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="mutter"),
        version=mutter_version,
        previous_version="46.0-1ubuntu9",
        binaries=["mutter", "libmutter-14-0"],
        phased_update_percentage=mutter_percentage,
        **mutter,
    )
    dependent = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="gnome-shell"),
        version=shell_version,
        previous_version="46.0-0ubuntu6~24.04.3",
        binaries=["gnome-shell"],
        relations=[["depends", "gnome-shell", "libmutter-14-0", operator, mutter_version]],
        phased_update_percentage=shell_percentage,
    )
    return needed, dependent


def test_the_overview_shows_the_group_its_share_of_machines_and_why_it_holds(anonymous):
    needed, dependent = group(
        mutter_percentage=0, state=PhasingState.HALTED, hold_reason=HoldReason.PROBLEMS
    )
    dependent.hold_reason = HoldReason.DEPENDENCY
    dependent.hold_detail = f"mutter {needed.version}: halted (gnome-shell Depends on libmutter-14-0 (>= {needed.version}))"  # noqa: E501
    dependent.save()

    html = anonymous.get("/").content.decode()

    # The line names what it needs; the group's details are on the update's own page.
    assert f">needs mutter {needed.version} (halted)</small>" in html
    assert f'title="mutter {needed.version}: halted (gnome-shell Depends on' in html
    assert ">waits for an update it needs</span>" in html
    assert "the product of their shares, taking the draws as independent" in html


def test_the_history_page_shows_the_group_of_a_version_in_phasing(anonymous):
    needed, _ = group(mutter_percentage=50, shell_percentage=20)

    html = anonymous.get("/source/gnome-shell/").content.decode()

    assert f"needs mutter {needed.version} (at 50%)" in html
    assert "with what it needs: ≈ 10.5% of machines" in html  # 21/101 × 51/101
    assert "Updates held together." in html
    assert (
        f"needed by gnome-shell {SHELL} (at 20%)"
        in anonymous.get("/source/mutter/").content.decode()
    )


def test_a_package_its_policy_lets_phase_alone_says_so(anonymous):
    _, dependent = group()
    PolicyFactory(source_package=dependent.source_package, phase_with_dependencies=False)

    assert "its policy lets it phase alone" in anonymous.get("/").content.decode()


def test_updates_in_no_group_show_no_group(anonymous):
    PublicationFactory(source_package=SourcePackageFactory(name="hello"))

    html = anonymous.get("/").content.decode()

    assert "group-note" not in html and "Updates held together." not in html


def test_the_machine_page_explains_an_update_kept_back_for_what_it_needs(anonymous):
    mutter_version = version_drawn("mutter", included=False, percentage=20)
    shell = next(
        f"46.0-0ubuntu6~24.04.{n}"
        for n in range(1, 1000)
        if apt_phasing.phased_draw("gnome-shell", f"46.0-0ubuntu6~24.04.{n}", MACHINE_ID) <= 20
    )
    needed, _ = group(mutter_version=mutter_version, shell_version=shell)
    draw = apt_phasing.phased_draw("mutter", mutter_version, MACHINE_ID)

    response = anonymous.get(f"/machine/?machine_id={MACHINE_ID}")

    html = response.content.decode()
    assert "in its phase, but kept back for what it needs" in html
    assert (
        f"kept back: gnome-shell Depends on libmutter-14-0 (&gt;= {mutter_version}), and mutter "
        f"{mutter_version} is not yet in this machine&#x27;s phase (this machine&#x27;s draw for "
        f"it is {draw}, above its 20%)"
    ) in html
    assert response.context["included_count"] == 0  # neither is installed now

    answer = anonymous.get(f"/api/v1/machine/?machine_id={MACHINE_ID}").json()
    shell_row = next(r for r in answer["results"] if r["source_package"] == "gnome-shell")
    assert (shell_row["included"], shell_row["installs"]) == (True, False)
    assert shell_row["kept_back_for"][0] | {"explanation": ""} == {
        "publication_id": needed.pk,
        "source_package": "mutter",
        "version": mutter_version,
        "relation": f"gnome-shell Depends on libmutter-14-0 (>= {mutter_version})",
        "draw": draw,
        "percentage": 20,
        "explanation": "",
    }

    fleet = anonymous.post(
        "/api/v1/machines/", {"machine_ids": [MACHINE_ID]}, content_type="application/json"
    ).json()
    decisions = fleet["machines"][0]["decisions"]
    assert any(d["kept_back_for"] for d in decisions)


def test_an_update_whose_needs_are_in_this_machines_phase_is_installed(anonymous):
    mutter_version = version_drawn("mutter", included=True, percentage=20)
    shell = next(
        f"46.0-0ubuntu6~24.04.{n}"
        for n in range(1, 1000)
        if apt_phasing.phased_draw("gnome-shell", f"46.0-0ubuntu6~24.04.{n}", MACHINE_ID) <= 20
    )
    group(mutter_version=mutter_version, shell_version=shell)

    response = anonymous.get(f"/machine/?machine_id={MACHINE_ID}")

    assert "kept back for what it needs" not in response.content.decode()
    assert response.context["included_count"] == 2
