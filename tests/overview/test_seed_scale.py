"""seed_demo at benchmark size: 2,000 updates in phasing and 100,000 phasing events.

The slowest test of the suite (a few minutes): it is what `make bench` relies on.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command

from packages.models import ACTIVE_STATES, PhasingEvent, Publication


@pytest.mark.django_db(transaction=True)
def test_seed_demo_reaches_benchmark_size():
    call_command(
        "seed_demo",
        "--publications",
        "2000",
        "--days",
        "2",
        "--step-hours",
        "6",
        "--baseline-days",
        "1",
    )
    assert Publication.objects.filter(state__in=ACTIVE_STATES).count() >= 2000
    assert PhasingEvent.objects.count() >= 100_000
    assert Publication.objects.values("release").distinct().count() == 6
