"""Collections as Launchpad's web service serves them (lazr.restful 4.0.0 with
lazr.batchnavigator 4.0.0, and Launchpad's configuration, lgp171188/launchpad@eafda459):

- ``ws.start``/``ws.size``, 50 entries by default and 300 at most; a larger size is a 400
  ``Maximum for "ws.size" parameter is 300.`` (_batchnavigator.py 217-221,
  interfaces/_rest.py 781), a size it cannot read is ignored (209-215);
- a named GET operation's page carries ``total_size_link`` (``...&ws.show=total_size``,
  answered by a bare integer) except on its last page, which has ``total_size`` inline
  (_resource.py 653-720, _operation.py 60-79; lib/lp/services/webservice/
  configuration.py 30-32, devel is the first version with total_size_link);
- ``next_collection_link`` while there is more, ``prev_collection_link`` after the first.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlencode

from tests.fake_http import Recorded, Reply

DEFAULT_SIZE, MAX_SIZE = 50, 300


def batch(request: Recorded, base: str, items: list, entry: Callable, *, named: bool) -> Reply:
    """One page of ``items`` (each shown by ``entry``) for this request."""
    if request.param("ws.show") == "total_size":
        return Reply(json=len(items))
    try:
        asked = int(request.param("ws.size") or 0)
    except ValueError:
        asked = 0
    if asked > MAX_SIZE:
        return Reply(status=400, body=f'Maximum for "ws.size" parameter is {MAX_SIZE}.')
    size = asked if asked > 0 else DEFAULT_SIZE
    start = max(int(request.param("ws.start") or 0), 0)
    kept = [
        (key, value)
        for key, values in request.query.items()
        if key not in ("ws.start", "ws.size")
        for value in values
    ]

    def link(*extra: tuple[str, str]) -> str:
        return f"{base}{request.path}?{urlencode(kept + list(extra))}"

    body: dict = {"start": start}
    more = start + size < len(items)
    if more and named:
        body["total_size_link"] = link(("ws.show", "total_size"))
    else:
        body["total_size"] = len(items)
    if more:
        body["next_collection_link"] = link(("ws.size", str(size)), ("ws.start", str(start + size)))
    if start:
        body["prev_collection_link"] = link(
            ("ws.size", str(size)), ("ws.start", str(max(start - size, 0)))
        )
    body["entries"] = [entry(item) for item in items[start : start + size]]
    return Reply(json=body)
