"""A person cannot take an update to 100% while it Breaks the old version of one still
phasing: on machines not yet in that one's phase, full-upgrade would remove it
(LP #2098140). The refusal says why; a policy can switch it off."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from packages.models import PhasingState
from packages.services import publication_release, publication_set_percentage
from tests.factories import (
    PolicyFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
    UserFactory,
)
from tests.packages.admin.admin_actions import apply_action

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def systemd_breaking_netplan(*, netplan_percentage=30):
    noble = ReleaseFactory()
    netplan = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="netplan.io"),
        version="1.1.2-2~ubuntu24.04.1",
        previous_version="1.0-2ubuntu1.2",
        binaries=["netplan.io", "libnetplan1"],
        phased_update_percentage=netplan_percentage,
    )
    systemd = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="systemd"),
        version="255.4-1ubuntu8.6",
        previous_version="255.4-1ubuntu8.5",
        binaries=["systemd"],
        relations=[["breaks", "systemd", "netplan.io", "<<", "1.1~"]],
        phased_update_percentage=30,
    )
    return netplan, systemd


@pytest.mark.parametrize(
    "complete",
    [
        lambda p, actor: publication_release(publication=p, actor=actor, reason="urgent fix"),
        lambda p, actor: publication_set_percentage(
            publication=p, percentage=100, actor=actor, reason="urgent fix"
        ),
    ],
    ids=["release", "set 100"],
)
def test_completing_an_update_that_breaks_one_still_phasing_is_refused_with_the_reason(complete):
    _, systemd = systemd_breaking_netplan()

    with pytest.raises(ValidationError) as refused:
        complete(systemd, UserFactory())

    assert (
        "systemd Breaks netplan.io (<< 1.1~), and netplan.io 1.1.2-2~ubuntu24.04.1 is still "
        "phasing at 30%" in str(refused.value)
    )
    assert "full-upgrade would remove it" in str(refused.value)
    systemd.refresh_from_db()
    assert (systemd.state, systemd.phased_update_percentage) == (PhasingState.PHASING, 30)


def test_once_the_broken_one_is_released_the_other_may_be():
    netplan, systemd = systemd_breaking_netplan()
    admin = UserFactory()

    publication_release(publication=netplan, actor=admin, reason="fixes boot")
    publication_release(publication=systemd, actor=admin, reason="fixes boot")

    systemd.refresh_from_db()
    assert systemd.state == PhasingState.COMPLETE


def test_setting_a_lower_percentage_is_not_refused():
    _, systemd = systemd_breaking_netplan()

    publication_set_percentage(publication=systemd, percentage=60, actor=UserFactory(), reason="on")

    systemd.refresh_from_db()
    assert systemd.phased_update_percentage == 60


def test_a_policy_that_lets_the_package_phase_alone_allows_it():
    _, systemd = systemd_breaking_netplan()
    PolicyFactory(source_package=systemd.source_package, phase_with_dependencies=False)

    publication_release(publication=systemd, actor=UserFactory(), reason="we know")

    systemd.refresh_from_db()
    assert systemd.state == PhasingState.COMPLETE


def test_the_admin_shows_why_it_refused_to_release(archive_admin):
    _, systemd = systemd_breaking_netplan()

    response = apply_action(archive_admin, "release_to_everyone", [systemd], reason="urgent")

    messages = " ".join(str(m) for m in response.context["messages"])
    assert "systemd Breaks netplan.io (<< 1.1~)" in messages
    assert "still phasing at 30%" in messages
    systemd.refresh_from_db()
    assert systemd.state == PhasingState.PHASING
