"""'Is my machine in the phase?': apt's decision for one machine, and when it changes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.domain import apt_phasing
from packages.models import PhasingState
from tests.factories import NOW, PublicationFactory, ReleaseFactory, SourcePackageFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]

MACHINE_ID = "4c4c4544004a4d1080345ac04f565232"


def _draw(name: str, version: str) -> int:
    return apt_phasing.phased_draw(name, version, MACHINE_ID)


def _kept_back_version(name: str, *, above: int) -> str:
    """A version whose draw for MACHINE_ID is above `above`, so apt keeps it back."""
    for n in range(1, 500):
        version = f"1.0-1ubuntu0.{n}"
        if _draw(name, version) > above:
            return version
    raise AssertionError("no such version")


def test_without_a_machine_id_it_shows_the_form_and_the_explanation(anonymous):
    response = anonymous.get("/machine/")

    html = response.content.decode()
    assert response.status_code == 200
    assert 'name="machine_id"' in html
    for words in (
        "APT::Get::Always-Include-Phased-Updates",
        "APT::Get::Never-Include-Phased-Updates",
        "Update-Manager::",
        "Security updates",
        "Fresh installs",
        "apt install &lt;package&gt;",
        "about 1 in 101",
    ):
        assert words in html


def test_it_gives_apts_decision_for_each_update_in_phasing(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    bash = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="bash"),
        version="5.2.21-2ubuntu4.1",
        phased_update_percentage=40,
    )
    PublicationFactory(release=noble, state=PhasingState.COMPLETE, phased_update_percentage=100)

    response = anonymous.get(f"/machine/?machine_id={MACHINE_ID}&release=noble")

    assert response.status_code == 200
    [row] = response.context["rows"]
    draw = _draw("bash", "5.2.21-2ubuntu4.1")
    assert row.publication == bash
    assert row.decision.draw == draw
    assert row.decision.included is (draw <= 40)
    assert row.decision.included_from_percentage == draw


def test_a_kept_back_update_says_when_the_machine_will_get_it(anonymous):
    version = _kept_back_version("hello", above=40)
    draw = _draw("hello", version)
    # Default policy: 30% now, last step just now, +10 every 6 hours.
    PublicationFactory(
        source_package=SourcePackageFactory(name="hello"),
        version=version,
        phased_update_percentage=30,
        last_increase_at=NOW,
    )

    response = anonymous.get(f"/machine/?machine_id={MACHINE_ID}")

    [row] = response.context["rows"]
    steps = -(-(draw - 30) // 10)  # whole steps of 10 points to reach the draw
    assert row.decision.included is False
    assert row.included_at == NOW + timedelta(hours=6 * steps)
    assert "kept back" in response.content.decode()


def test_a_paused_or_halted_update_waits_until_phasing_resumes(anonymous):
    version = _kept_back_version("hello", above=20)
    PublicationFactory(
        source_package=SourcePackageFactory(name="hello"),
        version=version,
        state=PhasingState.PAUSED,
        phased_update_percentage=20,
    )

    response = anonymous.get(f"/machine/?machine_id={MACHINE_ID}")

    [row] = response.context["rows"]
    assert row.included_at is None
    assert "when phasing resumes" in response.content.decode()


def test_the_machine_id_is_used_as_apt_uses_it_only_its_line_end_removed(anonymous):
    """apt takes APT::Machine-ID verbatim and /etc/machine-id's first line without its
    line end (apt-pkg/aptconfiguration.cc 596-623): no lower-casing, and an upper-case id
    gets apt's draw for that very string."""
    hello = PublicationFactory(source_package=SourcePackageFactory(name="hello"))

    response = anonymous.get("/machine/", {"machine_id": MACHINE_ID.upper() + "\n"})

    assert response.status_code == 200
    assert response.context["machine_id"] == MACHINE_ID.upper()
    [row] = response.context["rows"]
    assert row.decision.draw == apt_phasing.phased_draw("hello", hello.version, MACHINE_ID.upper())
    assert "used exactly as apt uses it" in response.content.decode()


def test_a_fleet_id_of_any_shape_is_drawn_on_and_shown_escaped(anonymous):
    PublicationFactory()

    response = anonymous.get("/machine/", {"machine_id": "<script>fleet</script>"})

    assert response.status_code == 200
    assert "&lt;script&gt;fleet&lt;/script&gt;" in response.content.decode()
    assert "<script>fleet" not in response.content.decode()


@pytest.mark.parametrize("bad", ["", "\n", "tab\there", "x" * 201])
def test_a_machine_id_apt_could_not_use_is_a_form_error(anonymous, bad):
    response = anonymous.get("/machine/", {"machine_id": bad})

    assert response.status_code == 400
    assert response.context["form"].errors["machine_id"]


def test_the_page_says_what_each_apt_says_and_how_to_phase_a_fleet_together(anonymous):
    """Wording: apt-private/private-output.cc 780-801 (2.7.11 and later; Output-Version 30
    in apt 3) and 493-501 at tag 2.4.13; rules: apt-pkg/depcache.cc 2566-2611,
    aptconfiguration.cc 628-652 (ischroot -t), pkgcache.cc 1067-1086 (-security)."""
    html = anonymous.get("/machine/").content.decode()

    for words in (
        "The following upgrades have been deferred due to phasing:",
        "Not upgrading yet due to phasing:",
        "The following packages have been kept back:",
        "2.4 (Ubuntu 22.04)",
        "Always-Include wins",
        "only where the <code>APT::Get::</code> option is not set at all",
        "ischroot -t",
        "any suite whose name ends in <code>-security</code>",
        "2.4.12",
        "LP #2051181",
        'APT::Machine-ID "c0ffee00-1234-4abc-9def-0123456789ab";',
        "/api/v1/machines/",
    ):
        assert words in html, words


def test_an_unknown_release_is_a_form_error(anonymous):
    response = anonymous.get("/machine/", {"machine_id": MACHINE_ID, "release": "nosuch"})

    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()


@pytest.mark.parametrize("size", [3, 40])
def test_the_page_costs_a_fixed_number_of_queries(anonymous, django_assert_num_queries, size):
    noble = ReleaseFactory(codename="noble")
    for n in range(size):
        PublicationFactory(release=noble, source_package=SourcePackageFactory(name=f"pkg{n}"))
    # 1 release validated, 2 count, 3 page of publications, 4 policies, 5 the updates in
    # phasing as the dependency rule reads them (what keeps one back), 6 releases of the
    # form's select, 7 source syncs in the footer.
    with django_assert_num_queries(7):
        response = anonymous.get(f"/machine/?machine_id={MACHINE_ID}&release=noble&page=1")
    assert len(response.context["rows"]) == size
