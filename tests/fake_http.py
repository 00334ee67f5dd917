"""A real HTTP server on 127.0.0.1 that answers what a test scripts, and records requests.

The remote sources are tested through their own HTTP client against this server, so
timeouts, retries, headers and bodies are exercised for real. Routes match a method, a
path and optionally some query parameters; each route answers its replies in order and
repeats the last one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    status: int = 200
    json: Any = None
    body: bytes | str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # Seconds to wait before answering: longer than the client's timeout makes a timeout.
    delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    @property
    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode(), keep_blank_values=True).items()}


ReplySource = Reply | Callable[[Recorded], Reply]


@dataclass
class _Route:
    method: str
    path: str
    query: Mapping[str, str]
    replies: list[ReplySource]
    served: int = 0

    def matches(self, request: Recorded) -> bool:
        if request.method != self.method:
            return False
        if self.path.endswith("/*"):
            # A whole tree, for a fake service that routes its own paths.
            if not request.path.startswith(self.path[:-1]):
                return False
        elif request.path != self.path:
            return False
        return all(request.param(k) == v for k, v in self.query.items())

    def next_reply(self, request: Recorded) -> Reply:
        source = self.replies[min(self.served, len(self.replies) - 1)]
        self.served += 1
        return source(request) if callable(source) else source


class FakeHTTPServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._routes: list[_Route] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def route(
        self,
        method: str,
        path: str,
        *replies: ReplySource,
        query: Mapping[str, str] | None = None,
    ) -> None:
        """Answer ``method path`` (with these query values) by ``replies`` in order.

        A path ending in ``/*`` answers every path under it. A later route for the same request
        wins, so a test can override a default.
        """
        with self._lock:
            self._routes.insert(0, _Route(method, path, dict(query or {}), list(replies)))

    def get(self, path: str, *replies: ReplySource, query: Mapping[str, str] | None = None):
        self.route("GET", path, *replies, query=query)

    def post(self, path: str, *replies: ReplySource, query: Mapping[str, str] | None = None):
        self.route("POST", path, *replies, query=query)

    def made(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (path is None or r.path == path)
        ]

    def start(self) -> FakeHTTPServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeHTTPServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _answer(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            for route in self._routes:
                if route.matches(request):
                    return route.next_reply(request)
        return Reply(status=404, body=f"no route for {request.method} {request.path}")

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # One write per answer: headers and body in separate packets meet delayed ACKs.
            wbufsize = 1 << 16

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorded = Recorded(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query, keep_blank_values=True),
                    headers={k: v for k, v in self.headers.items()},
                    body=body,
                )
                reply = fake._answer(recorded)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.json is not None:
                    payload = json.dumps(reply.json).encode()
                    content_type = "application/json"
                elif isinstance(reply.body, str):
                    payload, content_type = reply.body.encode(), "text/plain; charset=utf-8"
                else:
                    payload, content_type = reply.body or b"", "application/octet-stream"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up waiting, as a timeout test means it to.
                    pass

            do_GET = _serve
            do_POST = _serve
            do_PUT = _serve

        return Handler


class SleepRecorder:
    """Stands in for time.sleep: backoff is asserted, never waited for."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
