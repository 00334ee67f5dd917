"""What the judges' tests share."""

from __future__ import annotations

import pytest
from django.core.cache import cache


@pytest.fixture
def reuse_on(settings):
    """Judgements kept between ticks, as in production (the tests' settings turn it off),
    in an empty cache."""
    settings.PHASING_JUDGEMENT_REUSE = True
    cache.clear()
    yield
    cache.clear()
