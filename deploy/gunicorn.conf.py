"""gunicorn's settings for Phasing, from the environment (docs/deploy.md)."""

import multiprocessing
import os
from pathlib import Path

# Behind the reverse proxy, on loopback or a private address; PORT is set by honcho.
bind = os.environ.get("GUNICORN_BIND") or f"127.0.0.1:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("GUNICORN_WORKERS") or 2 * multiprocessing.cpu_count() + 1)
# Pages answer in milliseconds; a request still running after this is stuck.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20
# The proxy's X-Forwarded-* are trusted from these addresses only.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
accesslog = "-" if os.environ.get("GUNICORN_ACCESS_LOG", "0") == "1" else None
max_requests = 2000  # recycle workers now and then: memory stays flat
max_requests_jitter = 200

# gunicorn's control socket (gunicornc) defaults to one path per user, so two deployments
# or two demos of one user would take each other's: each gets its own, in its var folder
# beside its database and broker (PHASING_VAR_DIR), or GUNICORN_CONTROL_SOCKET. A path
# too long for a Unix socket (108 bytes) turns the socket off rather than failing to start.
_var = Path(os.environ.get("PHASING_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET") or str(
    _var / f"gunicorn-{''.join(c if c.isalnum() else '-' for c in bind.rsplit(':', 1)[-1])}.ctl"
)
control_socket_disable = len(os.fsencode(control_socket)) > 100
