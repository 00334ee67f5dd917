"""The product's settings with the anonymous overview page cache on, as in production.

The bench's environment sets PHASING_PAGE_CACHE_SECONDS=0 so that every other figure is
of the page rendered; this module is the one run with the cache.
"""

from phasing_site.settings import *  # noqa: F403

PHASING_PAGE_CACHE_SECONDS = 60
