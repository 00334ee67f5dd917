"""The product's settings with the anonymous overview page cache switched on, for the bench.

PHASING_PAGE_CACHE_SECONDS is read by overview.views; until phasing_site.settings reads
it from the environment, the bench sets it here.
"""

from phasing_site.settings import *  # noqa: F403

PHASING_PAGE_CACHE_SECONDS = 60
