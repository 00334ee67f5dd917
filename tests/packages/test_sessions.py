"""A privileged session (staff, triagers, archive admins) ends sooner than a member's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def _session_age(user) -> int:
    client = Client()
    client.force_login(user)
    return client.session.get_expiry_age()


def test_staff_triager_and_admin_sessions_last_the_shorter_configured_age(
    settings, archive_admin_user, triager_user, superuser, member_user
):
    settings.PHASING_PRIVILEGED_SESSION_AGE = timedelta(hours=2)

    assert _session_age(archive_admin_user) == 2 * 3600
    assert _session_age(triager_user) == 2 * 3600
    assert _session_age(superuser) == 2 * 3600
    assert _session_age(member_user) == settings.SESSION_COOKIE_AGE == 14 * 24 * 3600


def test_a_password_login_of_staff_gets_the_short_session(settings, anonymous):
    from tests.factories import UserFactory

    UserFactory(username="staffer", is_staff=True, password="correct horse battery staple")
    response = anonymous.post(
        "/admin/login/", {"username": "staffer", "password": "correct horse battery staple"}
    )

    assert response.status_code == 302
    assert anonymous.session.get_expiry_age() == 8 * 3600
    assert anonymous.cookies[settings.SESSION_COOKIE_NAME]["httponly"]
