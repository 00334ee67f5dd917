"""The anonymous overview is kept until the data changes: never stale, no time-to-live.

Transactional tests, as in production: the database raises the data version when a
write commits, and the cached page is keyed by it and by the minute.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from overview.pages.page_cache import local_pages_forget
from overview.triage.overrides import override_create
from packages.services.rollouts import publication_pause
from tests.factories import NOW, ProblemFactory, PublicationFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.embedded]


@pytest.fixture(autouse=True)
def page_cache_on(settings, frozen_now):
    settings.PHASING_PAGE_CACHE = True
    # Each test's flush starts the data version again: forget the pages of the last one.
    cache.clear()
    local_pages_forget()
    yield
    cache.clear()
    local_pages_forget()


def test_anonymous_visitors_share_one_rendering_at_the_cost_of_one_query(
    anonymous, django_assert_num_queries
):
    PublicationFactory(source_package__name="kept")
    first = anonymous.get("/?release=noble&sort=-percentage")
    # A hit: only the data version, no rendering.
    with django_assert_num_queries(1):
        second = anonymous.get("/?release=noble&sort=-percentage")
    assert second.status_code == 200 and second.content == first.content
    assert second["X-Frame-Options"] == first["X-Frame-Options"] == "DENY"


def test_a_committed_change_is_seen_at_once(anonymous):
    publication = PublicationFactory(source_package__name="tool")
    assert "paused by Ada Lovelace" not in anonymous.get("/").content.decode()

    ada = UserFactory(username="ada", first_name="Ada", last_name="Lovelace")
    publication_pause(publication=publication, actor=ada, reason="bug")

    assert "paused by Ada Lovelace" in anonymous.get("/").content.decode()


def test_a_new_override_is_seen_at_once(anonymous):
    problem = ProblemFactory(publication=PublicationFactory(source_package__name="tool"))
    assert "overridden" not in anonymous.get("/").content.decode()

    override_create(
        source_package=problem.publication.source_package,
        version=problem.publication.version,
        kind=problem.kind,
        bucket=problem.bucket,
        actor=UserFactory(),
        reason="not caused by the update",
    )

    assert "overridden" in anonymous.get("/").content.decode()


def test_relative_times_move_on_with_the_minute(anonymous):
    PublicationFactory(state="halted", state_changed_at=NOW - timedelta(minutes=5))
    assert "5 min ago" in anonymous.get("/").content.decode()
    with time_machine.travel(NOW + timedelta(minutes=1), tick=False):
        assert "6 min ago" in anonymous.get("/").content.decode()


def test_signed_in_people_searches_and_exports_are_always_rendered(
    anonymous, member, django_assert_num_queries
):
    PublicationFactory(source_package__name="tool")
    for url in ("/", "/?q=tool", "/?_export=csv", "/?sort=nonsense"):
        anonymous.get(url)
        member.get(url)
    with django_assert_num_queries(1):
        anonymous.get("/")
    # Rendered each time: more than the one query of a cached page.
    for client, url in (
        (member, "/"),
        (anonymous, "/?q=tool"),
        (anonymous, "/?_export=csv"),
        (anonymous, "/?sort=nonsense"),
    ):
        with CaptureQueriesContext(connection) as captured:
            client.get(url)
        assert len(captured) > 1, url


REDIS_DOWN = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens on port 1
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
    }
}


def test_with_redis_down_the_overview_is_served_without_the_cache(anonymous, caplog):
    PublicationFactory(source_package__name="tool")

    with override_settings(CACHES=REDIS_DOWN):
        responses = [anonymous.get("/") for _ in range(2)]

    assert [r.status_code for r in responses] == [200, 200]
    assert all("tool" in r.content.decode() for r in responses)
    assert "page cache unavailable" in caplog.text
