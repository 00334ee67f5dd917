"""The product's settings with the anonymous page cache on, as in production.

The bench's environment sets PHASING_PAGE_CACHE=0 so that every other figure is of the
page rendered; this module is the one run with the cache (kept until the data changes).
"""

from phasing_site.settings import *  # noqa: F403

PHASING_PAGE_CACHE = True
