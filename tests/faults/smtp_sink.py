"""An SMTP server the test controls: it accepts and keeps messages, refuses connections
(down), or takes a message and drops the connection before its 250 (as a relay that
crashes after DATA)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

ACCEPT, DOWN, DROP_AFTER_DATA = "accept", "down", "drop after data"


class SmtpSink:
    def __init__(self) -> None:
        self.mode = ACCEPT
        self.received: list[bytes] = []  # every message whose DATA arrived whole
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                if self.mode == DOWN:
                    conn.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    continue
                with contextlib.suppress(OSError):
                    self._session(conn)

    def _session(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        stream = conn.makefile("rb")
        conn.sendall(b"220 sink ESMTP\r\n")
        while line := stream.readline():
            verb = line[:4].upper()
            if verb in (b"EHLO", b"HELO"):
                conn.sendall(b"250 sink\r\n")
            elif verb == b"DATA":
                conn.sendall(b"354 go ahead\r\n")
                message = b""
                while (chunk := stream.readline()) not in (b".\r\n", b""):
                    message += chunk
                self.received.append(message)
                if self.mode == DROP_AFTER_DATA:
                    return  # taken, and the connection dropped before its 250
                conn.sendall(b"250 queued\r\n")
            elif verb == b"QUIT":
                conn.sendall(b"221 bye\r\n")
                return
            else:  # MAIL, RCPT, RSET, NOOP
                conn.sendall(b"250 ok\r\n")

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self._thread.join(timeout=2)


@contextlib.contextmanager
def smtp_sink() -> Iterator[SmtpSink]:
    sink = SmtpSink()
    try:
        yield sink
    finally:
        sink.close()
