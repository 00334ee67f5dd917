"""Times in the admin say their zone: archive admins work across time zones."""

from __future__ import annotations

import pytest

from tests.factories import NOW, PhasingEventFactory

pytestmark = pytest.mark.django_db


def test_the_events_list_shows_times_with_their_zone(archive_admin):
    PhasingEventFactory(created_at=NOW)

    html = archive_admin.get("/admin/packages/phasingevent/").content.decode()

    assert f"{NOW:%H:%M} UTC" in html
