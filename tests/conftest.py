"""Personas shared by every test: anonymous, member, triager, archive admin, superuser."""

from __future__ import annotations

import os

import pytest
import time_machine
from django.contrib.auth.models import Group, Permission
from django.test import Client
from hypothesis import settings as hypothesis_settings

from packages.roles import ARCHIVE_ADMINS, GROUP_PERMISSIONS, TRIAGERS
from tests.factories import NOW, PublicationFactory, SourcePackageFactory, UserFactory
from tests.fake_http import FakeHTTPServer, SleepRecorder
from tests.overview.controller.fakes import ScriptedCrashes

# Generated cases are the same on every run (CI never meets a new one by chance); a
# developer explores more with HYPOTHESIS_PROFILE=explore.
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
hypothesis_settings.register_profile("explore", max_examples=1000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def fixed_instant(request):
    """Every test runs from the same instant (a Thursday noon, UTC), its clock ticking from
    there: seeding, ticks and relative times on pages read the same whatever day the suite
    runs. Tests that start other processes (a Celery worker, gunicorn, apt) share the real
    clock with them instead, through the `real_clock` or `celery_worker` marker."""
    if request.node.get_closest_marker("real_clock") or request.node.get_closest_marker(
        "celery_worker"
    ):
        yield None
        return
    with time_machine.travel(NOW, tick=True):
        yield NOW


@pytest.fixture(autouse=True)
def kept_groups_forgotten():
    """Transactional tests flush the data version back to 0: values kept under a number
    from an earlier test must not be served to a later one (packages.group_cache,
    overview.pages.kept)."""
    from overview.pages.kept import kept_forget
    from packages.group_cache import groups_forget

    groups_forget()
    kept_forget()
    yield
    groups_forget()
    kept_forget()


@pytest.fixture
def http_server():
    """A local HTTP server that answers as the test scripts it (Launchpad, the tracker...)."""
    with FakeHTTPServer() as server:
        yield server


@pytest.fixture
def sleeps() -> SleepRecorder:
    """Backoff waits recorded instead of slept."""
    return SleepRecorder()


@pytest.fixture
def anonymous() -> Client:
    return Client()


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def group_named(name: str) -> Group:
    """The group the data migration made; transactional tests flush it, so remake it then."""
    group, created = Group.objects.get_or_create(name=name)
    if created:  # flush re-makes permissions (post_migrate), not the migration's groups
        for code in GROUP_PERMISSIONS[name]:
            app_label, codename = code.split(".")
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
    return group


@pytest.fixture
def member_user(db):
    return UserFactory(username="member")


@pytest.fixture
def triager_user(db):
    user = UserFactory(username="triager")
    user.groups.add(group_named(TRIAGERS))
    return user


@pytest.fixture
def archive_admin_user(db):
    user = UserFactory(username="archiveadmin", is_staff=True)
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


@pytest.fixture
def superuser(db):
    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def member(member_user) -> Client:
    return _client_for(member_user)


@pytest.fixture
def triager(triager_user) -> Client:
    return _client_for(triager_user)


@pytest.fixture
def archive_admin(archive_admin_user) -> Client:
    return _client_for(archive_admin_user)


@pytest.fixture
def admin_client_superuser(superuser) -> Client:
    return _client_for(superuser)


@pytest.fixture
def publication(db):
    """One update in phasing: tool 1.2-1ubuntu0.1 at 10%."""
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"), version="1.2-1ubuntu0.1"
    )


@pytest.fixture
def frozen_now():
    """The clock stopped at factories.NOW, so relative times on pages read the same."""
    with time_machine.travel(NOW, tick=False):
        yield NOW


@pytest.fixture
def crashes() -> ScriptedCrashes:
    """A crash source whose answers the test sets per package, for the controller's tick."""
    return ScriptedCrashes()


@pytest.fixture
def emails_sent_at_commit(monkeypatch):
    """Each email's task runs in the test's process when it is queued (after commit), as a
    worker would run it, instead of waiting on a broker no worker reads in the test run."""
    from overview.tasks import send_notification

    monkeypatch.setattr(send_notification, "delay", lambda pk: send_notification.apply(args=[pk]))
