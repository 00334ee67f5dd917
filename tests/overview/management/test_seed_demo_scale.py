"""seed_demo tops the archive up to the number of publications in phasing it is asked for,
as `make bench` relies on (2,000 and more there; a small plan here, so the suite stays fast).
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
        "300",
        "--days",
        "2",
        "--step-hours",
        "6",
        "--baseline-days",
        "1",
    )
    assert Publication.objects.filter(state__in=ACTIVE_STATES).count() >= 300
    # Every update in phasing was stepped by the replayed controller, not written as it is.
    assert PhasingEvent.objects.count() >= 300 * 2
    assert Publication.objects.values("release").distinct().count() == 6
