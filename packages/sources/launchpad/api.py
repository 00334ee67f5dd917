"""Launchpad's web service as a client speaks it, for packages.sources.launchpad.source.

A thin REST client rather than launchpadlib: launchpadlib drives everything from the
service's WADL description, which a local test server would have to serve in full. The
calls are the ones launchpadlib makes (lazr.restful, API version ``devel``):

- collections are JSON objects with ``entries`` and, while there are more,
  ``next_collection_link`` (followed as given; it carries ``ws.start``/``ws.size``). We ask
  for batches of 300, Launchpad's maximum (a larger ``ws.size`` is a 400), not its default
  50. The size of a collection is never needed: in devel a named operation's page carries
  ``total_size_link`` instead of ``total_size`` except on its last page (lazr.restful
  _resource.py 653-720), so nothing here reads either;
- named reads are ``GET <entry>?ws.op=<name>&<params>``, named writes are form-encoded
  ``POST <entry>`` with ``ws.op``; references are passed as their ``self_link``;
- with credentials every request carries an OAuth 1.0 PLAINTEXT ``Authorization`` header
  (Launchpad consumers have no secret, so the signature is ``&<token secret>``);
- values the caller may not see come back as ``tag:launchpad.net:2008:redacted``;
- links are followed only on the API's own host, so credentials go nowhere else.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import requests

from packages.sources.http import MalformedResponse, RetryingClient

log = logging.getLogger(__name__)

LAUNCHPAD_REALM = "https://api.launchpad.net/"
# lazr.batchnavigator's max_batch_size on Launchpad (config.launchpad.max_batch_size).
BATCH_SIZE = 300


def _oauth_escape(value: str) -> str:
    # RFC 5849 3.6: everything but the unreserved characters is percent-encoded.
    return quote(value, safe="-._~")


class LaunchpadClient:
    """The transport of a Launchpad source: where the API is, who we are, how to ask."""

    def __init__(
        self,
        *,
        api_root: str = "https://api.launchpad.net/devel/",
        distribution: str = "ubuntu",
        consumer_key: str = "",
        token: str = "",
        token_secret: str = "",
        timeout: float = 10.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api_root = api_root if api_root.endswith("/") else api_root + "/"
        self.distribution = distribution
        self.consumer_key = consumer_key
        self.token = token
        self.token_secret = token_secret
        root = urlsplit(self.api_root)
        self._origin = (root.scheme, root.netloc)
        self._http = RetryingClient(
            service="Launchpad",
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            session=session,
            sleep=sleep,
        )

    # -- transport ------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return urljoin(self.api_root, path)

    def _series_link(self, release: str) -> str:
        return self._url(f"{self.distribution}/{release}")

    def _archive_link(self) -> str:
        return self._url(f"{self.distribution}/+archive/primary")

    def _checked_link(self, link: str) -> str:
        """An absolute link on the API's own host: credentials never go anywhere else."""
        absolute = urljoin(self.api_root, link)
        parts = urlsplit(absolute)
        if (parts.scheme, parts.netloc) != self._origin:
            raise MalformedResponse(f"Launchpad linked outside its API: {absolute}", url=absolute)
        return absolute

    @property
    def can_write(self) -> bool:
        return bool(self.consumer_key and self.token and self.token_secret)

    def _signer(self) -> Callable[[], dict[str, str]] | None:
        return self._authorization if self.can_write else None

    def _authorization(self) -> dict[str, str]:
        signature = f"&{_oauth_escape(self.token_secret)}"  # empty consumer secret
        params = (
            ("oauth_consumer_key", self.consumer_key),
            ("oauth_token", self.token),
            ("oauth_signature_method", "PLAINTEXT"),
            ("oauth_signature", signature),
            ("oauth_timestamp", str(int(time.time()))),
            ("oauth_nonce", secrets.token_hex(16)),
            ("oauth_version", "1.0"),
        )
        header = ", ".join(f'{key}="{_oauth_escape(value)}"' for key, value in params)
        return {"Authorization": f'OAuth realm="{LAUNCHPAD_REALM}", {header}'}

    def _collection(
        self, url: str, params: Mapping[str, str] | None = None, *, size: int = BATCH_SIZE
    ) -> Iterator[dict[str, Any]]:
        """Every entry of a collection, following ``next_collection_link``."""
        seen: set[str] = set()
        next_url: str | None = url
        params = {**(params or {}), "ws.size": str(size)}
        while next_url is not None:
            body = self._http.get_json(next_url, params=params, sign=self._signer())
            if not isinstance(body, dict) or not isinstance(body.get("entries"), list):
                raise MalformedResponse(
                    f"Launchpad answered {next_url} with something that is not a collection",
                    url=next_url,
                )
            for entry in body["entries"]:
                if isinstance(entry, dict):
                    yield entry
                else:
                    log.warning("Launchpad: skipping a non-object entry in %s", next_url)
            link = body.get("next_collection_link")
            if link is None:
                return
            if not isinstance(link, str) or link in seen:
                log.warning("Launchpad: stopping at a bad next_collection_link %.200r", link)
                return
            seen.add(link)
            # The link carries every parameter, ws.op and ws.start included.
            next_url, params = self._checked_link(link), None
