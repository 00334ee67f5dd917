"""Groups from the data migration, `phasing_group`, `demo_accounts`, and the login rate limit."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from packages.permissions import can_change_phasing, can_override_problems, can_read_crash_reports
from packages.roles import ARCHIVE_ADMINS, GROUP_PERMISSIONS, TRIAGERS
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_the_migration_gives_each_group_exactly_its_permissions():
    for name, codes in GROUP_PERMISSIONS.items():
        group = Group.objects.get(name=name)
        have = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.all()}
        assert have == set(codes)


def test_the_roles_mean_what_they_say(member_user, triager_user, archive_admin_user, superuser):
    assert [
        can_read_crash_reports(u)
        for u in (member_user, triager_user, archive_admin_user, superuser)
    ] == [False, True, False, True]
    assert [
        can_override_problems(u) for u in (member_user, triager_user, archive_admin_user, superuser)
    ] == [False, True, False, True]
    assert [
        can_change_phasing(u) for u in (member_user, triager_user, archive_admin_user, superuser)
    ] == [False, False, True, True]


def test_an_inactive_triager_reads_nothing(triager_user):
    triager_user.is_active = False
    assert not can_read_crash_reports(triager_user)


def test_phasing_group_adds_and_removes_a_triager():
    user = UserFactory(username="tess")

    assert "tess is in triagers" in _run("phasing_group", "add", "tess", TRIAGERS)
    assert user.groups.filter(name=TRIAGERS).exists()
    user = get_user_model().objects.get(pk=user.pk)
    assert can_read_crash_reports(user)

    _run("phasing_group", "remove", "tess", TRIAGERS)
    assert not user.groups.filter(name=TRIAGERS).exists()


def test_adding_an_archive_admin_lets_them_into_the_admin():
    user = UserFactory(username="ada")

    _run("phasing_group", "add", "ada", ARCHIVE_ADMINS)

    user.refresh_from_db()
    assert user.is_staff
    assert user.groups.filter(name=ARCHIVE_ADMINS).exists()


def test_phasing_group_refuses_unknown_users_and_groups():
    with pytest.raises(CommandError):
        _run("phasing_group", "add", "nobody", TRIAGERS)
    UserFactory(username="someone")
    with pytest.raises(CommandError):
        _run("phasing_group", "add", "someone", "wizards")


def test_demo_accounts_are_refused_without_debug(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError):
        _run("demo_accounts")
    assert not get_user_model().objects.filter(username="admin").exists()


def test_demo_accounts_make_one_archive_admin_and_one_triager_and_can_run_twice(settings):
    settings.DEBUG = True
    first = _run("demo_accounts")
    second = _run("demo_accounts")

    assert "admin / phasing-admin-demo" in first
    assert "triager / phasing-triager-demo" in second
    User = get_user_model()
    assert User.objects.filter(username__in=["admin", "triager"]).count() == 2
    admin = User.objects.get(username="admin")
    triager = User.objects.get(username="triager")
    assert admin.is_staff and can_change_phasing(admin) and not can_read_crash_reports(admin)
    assert can_read_crash_reports(triager) and not can_change_phasing(triager)
    assert admin.check_password("phasing-admin-demo")
    # A second archive admin, who can sign off what the first asks.
    assert "admin2 / phasing-admin2-demo" in first
    assert can_change_phasing(User.objects.get(username="admin2"))


def test_demo_accounts_log_in_through_the_login_page(settings):
    settings.DEBUG = True
    _run("demo_accounts")
    client = Client()

    response = client.post(
        reverse("login"), {"username": "triager", "password": "phasing-triager-demo"}
    )

    assert response.status_code == 302
    assert client.session.get("_auth_user_id")


def test_guessing_passwords_is_locked_out_after_a_few_tries(settings):
    UserFactory(username="victim")
    client = Client()
    statuses = [
        client.post(reverse("login"), {"username": "victim", "password": f"guess{n}"}).status_code
        for n in range(settings.AXES_FAILURE_LIMIT + 1)
    ]

    assert statuses[0] == 200
    assert statuses[-1] == 429
    # Even the right password is refused while locked out.
    right = client.post(
        reverse("login"), {"username": "victim", "password": "correct horse battery staple"}
    )
    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_login_page_has_csrf_protection():
    client = Client(enforce_csrf_checks=True)
    UserFactory(username="u")

    response = client.post(
        reverse("login"), {"username": "u", "password": "correct horse battery staple"}
    )

    assert response.status_code == 403


def test_a_locked_out_person_is_told_why_in_the_products_look(settings):
    UserFactory(username="victim")
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("login"), {"username": "victim", "password": f"guess{n}"})

    response = client.post(reverse("login"), {"username": "victim", "password": "again"})

    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
