"""The data version: every committed write to what the pages show raises it, whatever
path it takes (once per transaction on PostgreSQL); a rolled-back one leaves it as it was.

Transactional tests: the database raises it when a transaction commits.
"""

from __future__ import annotations

import importlib

import pytest
from django.db import connection, transaction

from packages.data_version import data_version, triggers_installed
from packages.models import (
    PhasingState,
    Publication,
    ScheduledAction,
    ScheduledChange,
    SourceSync,
)
from packages.services.changes import Change
from packages.services.phasing import publications_apply
from packages.services.policies import policy_set
from packages.services.releases import release_freeze
from packages.services.rollouts import publication_pause
from packages.services.scheduled import (
    scheduled_change_cancel,
    scheduled_change_create,
    scheduled_changes_run_due,
)
from packages.services.sync import source_sync_record
from tests.factories import NOW, PublicationFactory, ReleaseFactory, UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.embedded]


def _raises_it_once(write) -> None:
    """On PostgreSQL once per transaction; SQLite's plain triggers raise it per row."""
    before = data_version()
    write()
    if connection.vendor == "postgresql":
        assert data_version() == before + 1
    else:
        assert data_version() > before


def test_a_person_s_change_through_the_event_writer_raises_it():
    publication, admin = PublicationFactory(), UserFactory()
    _raises_it_once(lambda: publication_pause(publication=publication, actor=admin, reason="a bug"))


def test_the_controller_s_bulk_changes_raise_it_once_for_the_whole_transaction():
    publications = [PublicationFactory(source_package__name=f"p{n}") for n in range(5)]

    def tick() -> None:
        with transaction.atomic():
            locked = list(Publication.objects.select_for_update().order_by("pk"))
            publications_apply([(p, Change.advanced(old=10, new=20)) for p in locked], now=NOW)

    _raises_it_once(tick)
    assert all(p.phased_update_percentage == 10 for p in publications)  # copies, unchanged
    assert set(Publication.objects.values_list("phased_update_percentage", flat=True)) == {20}


def test_freezing_a_release_and_changing_a_policy_raise_it():
    release, admin = ReleaseFactory(), UserFactory()
    _raises_it_once(lambda: release_freeze(release=release, actor=admin, reason="incident"))
    _raises_it_once(lambda: policy_set(actor=admin, reason="slower", step=5))


def test_a_sync_recording_its_source_raises_it():
    _raises_it_once(lambda: source_sync_record("simulator", "publications", now=NOW))
    assert SourceSync.objects.get().last_success_at == NOW


def test_a_plain_update_that_skips_every_service_raises_it_too():
    PublicationFactory()
    _raises_it_once(lambda: Publication.objects.update(state=PhasingState.PAUSED))


def test_scheduling_cancelling_and_running_a_change_raise_it():
    publication, admin = PublicationFactory(), UserFactory()

    def schedule():
        return scheduled_change_create(
            action=ScheduledAction.PAUSE, publication=publication, actor=admin, reason="weekend"
        )

    _raises_it_once(schedule)
    change = ScheduledChange.objects.get()
    _raises_it_once(lambda: scheduled_change_cancel(change=change, actor=admin, reason="no"))
    schedule()
    _raises_it_once(scheduled_changes_run_due)


def test_a_rolled_back_write_leaves_it_as_it_was():
    PublicationFactory()
    before = data_version()
    with transaction.atomic():
        Publication.objects.update(phased_update_percentage=50)
        transaction.set_rollback(True)
    assert data_version() == before


def test_every_table_the_pages_show_still_has_its_triggers_after_all_migrations():
    # SQLite rebuilds a table it alters without its triggers; a later migration must
    # put them back. The tables are those the trigger migrations name.
    tables = [
        *importlib.import_module("packages.migrations.0009_data_version").TABLES,
        *importlib.import_module("overview.migrations.0007_data_version_triggers").TABLES,
        *importlib.import_module("packages.migrations.0013_scheduled_changes").TABLES,
    ]
    assert triggers_installed(tables) == dict.fromkeys(tables, True)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a server that drops connections")
def test_a_page_s_read_of_it_is_the_health_check_of_a_kept_connection(monkeypatch):
    """A page pays one round trip for the version, not a "SELECT 1" before it as well; a
    connection the database dropped since the last request is opened again for it."""
    from django.db import connections

    publication_pause(publication=PublicationFactory(), actor=UserFactory(), reason="r", now=NOW)
    expected = data_version()
    pings = []
    usable = connection.is_usable
    monkeypatch.setattr(connection, "is_usable", lambda: pings.append(1) or usable())
    connection.close_if_unusable_or_obsolete()  # what Django does as a request starts

    assert data_version() == expected
    assert pings == []

    pid = connection.connection.info.backend_pid
    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    other.close()
    connection.close_if_unusable_or_obsolete()

    assert data_version() == expected
    assert connection.connection.info.backend_pid != pid
