"""Test settings: the real settings, with what a test run must not do switched off.

DATABASE_URL and REDIS_URL still come from the environment, so CI runs on PostgreSQL
and Redis; without them the tests use SQLite and an in-process broker.
"""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production-use-0123456789")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")

from phasing_site.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ALLOWED_HOSTS = ["testserver", "127.0.0.1", "localhost"]
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
CELERY_TASK_ALWAYS_EAGER = False
if not REDIS_URL:  # noqa: F405
    CELERY_BROKER_URL = "memory://"
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
LOGGING["root"] = {**LOGGING["root"], "level": "WARNING"}  # noqa: F405
PHASING_PAGE_CACHE = False  # a test sees the page as its own data makes it
# Tests that replace a judge's function must see it run: reuse is tested on its own.
PHASING_JUDGEMENT_REUSE = False
# Parallel test processes share one Redis server: each keeps its own keys, in a database
# of its own, since a test that clears the cache flushes its whole database.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
CACHES["default"]["KEY_PREFIX"] = _WORKER or "main"  # noqa: F405
if REDIS_URL and _WORKER.startswith("gw") and _WORKER[2:].isdigit():  # noqa: F405
    _SERVER = REDIS_URL.rsplit("/", 1)[0] if REDIS_URL.count("/") >= 3 else REDIS_URL  # noqa: F405
    CACHES["default"]["LOCATION"] = f"{_SERVER}/{10 + int(_WORKER[2:])}"  # noqa: F405
# Whitenoise looks for STATIC_ROOT even when nothing was collected.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
