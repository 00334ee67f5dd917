"""gunicorn's settings for Phasing, from the environment (docs/deploy.md)."""

import multiprocessing
import os

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
