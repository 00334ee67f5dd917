"""Settings for Phasing, read from the environment (see .env.example for every variable).

With nothing set the product runs on an embedded default: SQLite and a filesystem
message broker, so it starts on a machine with only Python. Set DATABASE_URL and
REDIS_URL to use PostgreSQL and Redis.
"""

from __future__ import annotations

import ipaddress
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from phasing_site.env import (
    env_bool,
    env_int,
    env_list,
    env_seconds,
    env_str,
)
from phasing_site.logging_config import logging_config
from phasing_site.paths import BASE_DIR, VAR_DIR

# The product's own settings: its sources, intervals, single sign-on, webhooks, links out
# and the judges (phasing_site/settings_phasing.py).
from phasing_site.settings_phasing import *  # noqa: F403
from phasing_site.settings_phasing import (
    PHASING_HTTP_TIMEOUT,
    PHASING_OIDC_ENABLED,
    PHASING_OIDC_ISSUER,
)

SECRET_KEY = env_str("SECRET_KEY")
# A deployment sets SECRET_KEY, and then DEBUG is off unless it says otherwise; with neither
# set this is a developer's checkout, which runs as the development default.
DEBUG = env_bool("DEBUG", not SECRET_KEY)

if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = "django-insecure-development-only-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "packages.adminsite.PhasingAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_tables2",
    "django_filters",
    "ninja",
    "axes",
    "csp",
    "packages",
    "overview",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # First to touch the database: each of its answers is awaited a few seconds at most.
    "phasing_site.deadline.RequestDatabaseDeadlineMiddleware",
    # A Content-Security-Policy on every answer: no script but the site's own files.
    "overview.pages.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before sessions and authentication: a cached anonymous page costs two lookups.
    "overview.pages.page_cache.AnonymousPageCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "overview.pages.middleware.RejectNulBytesMiddleware",
    # JSON for every error under /api/v1/, also Django's own 404 in development.
    "overview.pages.middleware.ApiErrorsAsJsonMiddleware",
    "overview.pages.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # After authentication (a superuser still sees Django's technical pages in DEBUG), and
    # inside CommonMiddleware, whose APPEND_SLASH redirect turns a 404 into a redirect.
    "overview.pages.middleware.StyledErrorsInDevelopmentMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so a locked-out login is answered before the view runs.
    "axes.middleware.AxesMiddleware",
]

# The pages carry no script of their own; the admin and the API docs load theirs from
# /static/. No inline style either: the percentage bars are a class per width.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

ROOT_URLCONF = "phasing_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "overview.pages.context_processors.service_status",
            ],
        },
    },
]

WSGI_APPLICATION = "phasing_site.wsgi.application"

DATABASE_URL = env_str("DATABASE_URL")
if not DATABASE_URL:
    # The embedded default keeps its database, broker queue and cache under var/.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL or f"sqlite:///{VAR_DIR / 'db.sqlite3'}",
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
        # Server-side cursors cost three round trips for a short list (a form's choices)
        # and do not survive a transaction-pooling PgBouncer (docs/deploy.md).
        disable_server_side_cursors=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default has a web server, a worker and beat writing at once: readers
    # never wait for a writer (WAL), a writer waits its turn instead of failing at once
    # (busy timeout), and a transaction that will write takes the write lock when it
    # begins, so two never deadlock half-way ("database is locked").
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": env_int("SQLITE_BUSY_TIMEOUT", 30, minimum=1),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
_STATEMENT_TIMEOUT = env_int("DATABASE_STATEMENT_TIMEOUT", 120, minimum=0)
# What the client waits for each answer of the database (0: no limit), past which it
# closes the connection itself: the server's statement_timeout is never enforced by a
# server that stopped answering. Tasks and commands get the statement timeout and a
# margin; a web request gets DATABASE_REQUEST_TIMEOUT, inside gunicorn's timeout.
DATABASE_CLIENT_TIMEOUT = env_int(
    "DATABASE_CLIENT_TIMEOUT", _STATEMENT_TIMEOUT + 10 if _STATEMENT_TIMEOUT else 0, minimum=0
)
DATABASE_REQUEST_TIMEOUT = env_int("DATABASE_REQUEST_TIMEOUT", 10, minimum=1)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A database that accepts connections and never answers must give a 503 within
    # seconds, not hang a request until gunicorn kills it (a bare 500): libpq gives up
    # connecting after DATABASE_CONNECT_TIMEOUT; the server ends a statement that runs
    # longer than DATABASE_STATEMENT_TIMEOUT (0: no limit); keepalives notice a peer gone;
    # and the client keeps its own deadline (phasing_site.postgresql) for a server that
    # stops answering after the connection was made.
    DATABASES["default"]["ENGINE"] = "phasing_site.postgresql"
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "connect_timeout": env_int("DATABASE_CONNECT_TIMEOUT", 5, minimum=1),
            # JIT off: Phasing's statements are short or set-based over indexes, and on an
            # archive's tables the planner's cost estimates made PostgreSQL compile each
            # ingest statement (1.7 s for a batch whose work took 2), every batch.
            "options": f"-c statement_timeout={_STATEMENT_TIMEOUT * 1000} -c jit=off",
            "keepalives": 1,
            "keepalives_idle": 30,
            "keepalives_interval": 10,
            "keepalives_count": 3,
        }
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's accounts; PHASING_PASSWORD_LOGIN off keeps all but break-glass admins out.
    "packages.sso.backends.PasswordBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sessions: two weeks for members; a privileged one (staff, superusers, triagers, archive
# admins) ends after PHASING_PRIVILEGED_SESSION_AGE (packages.sessions). Cookies are
# HttpOnly and SameSite=Lax, and Secure in production (below).
SESSION_COOKIE_AGE = env_int("SESSION_COOKIE_AGE", 14 * 24 * 3600, minimum=60)
PHASING_PRIVILEGED_SESSION_AGE = env_seconds("PHASING_PRIVILEGED_SESSION_AGE", timedelta(hours=8))
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview:index"
LOGOUT_REDIRECT_URL = "overview:index"

# Login rate limit: five failures lock the username and address pair for 15 minutes.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Lock by the real client address: X-Forwarded-For is believed only from these proxies
# (addresses or networks, e.g. the nginx in front); empty: REMOTE_ADDR, never the header.
PHASING_TRUSTED_PROXIES = env_list("PHASING_TRUSTED_PROXIES", [])
for _proxy in PHASING_TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError as _error:
        raise ImproperlyConfigured(
            f"PHASING_TRUSTED_PROXIES: {_proxy!r} is not an address or a network"
        ) from _error
AXES_CLIENT_IP_CALLABLE = "packages.client_address.client_address"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
# Times in the admin say their zone (phasing_site/formats/en_GB/formats.py).
FORMAT_MODULE_PATH = ["phasing_site.formats"]
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

REDIS_URL = env_str("REDIS_URL")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis that hangs must not hang the pages: they render without the cache.
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

# Celery: the broker, the tasks' limits and the beat's schedule (phasing_site/settings_celery.py).
from phasing_site.settings_celery import *  # noqa: E402, F403

# Where links in emails and feed ids point. Unset in development, the address `make run`
# serves on (its HOST and PORT); a wildcard bind is reached on the loopback address.
_RUN_HOST = env_str("HOST", "127.0.0.1")
_RUN_HOST = "127.0.0.1" if _RUN_HOST in ("", "0.0.0.0", "::", "[::]") else _RUN_HOST
if ":" in _RUN_HOST and not _RUN_HOST.startswith("["):
    _RUN_HOST = f"[{_RUN_HOST}]"  # an IPv6 address in a URL
PHASING_SITE_URL = env_str(
    "PHASING_SITE_URL",
    f"http://{_RUN_HOST}:{env_int('PORT', 8000)}" if DEBUG else "http://127.0.0.1:8000",
)
OIDC_TIMEOUT = PHASING_HTTP_TIMEOUT
LOGOUT_REDIRECT_URL_PATH = "/"
if PHASING_OIDC_ENABLED:
    AUTHENTICATION_BACKENDS.append("packages.sso.backends.SingleSignOnBackend")
    # The sign-out form's redirect goes on to the provider's end-session page.
    _issuer_origin = "{0.scheme}://{0.netloc}".format(urlsplit(PHASING_OIDC_ISSUER))
    CONTENT_SECURITY_POLICY["DIRECTIVES"]["form-action"].append(_issuer_origin)

# Anonymous visitors' overview is kept until the data changes (overview/pages/page_cache.py):
# never stale, no time-to-live. Signed-in people always see it rendered.
PHASING_PAGE_CACHE = env_bool("PHASING_PAGE_CACHE", not DEBUG)
PHASING_PAGE_CACHE_ALIAS = "default"
# Who may read /metrics besides signed-in staff: a scraper sending this bearer token.
PHASING_METRICS_TOKEN = env_str("PHASING_METRICS_TOKEN")

EMAIL_BACKEND = env_str(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))  # the file backend's folder
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Phasing <phasing@localhost>")
# Halt emails: "phasing" (signer, uploader and sponsor, the product's subject) or "ubuntu"
# (as phased-updater: signer and uploader, "[release/package] Possible regression" or
# "Increase in crash rate", once per person, problem and version, Cc the address below).
PHASING_HALT_EMAILS = env_str("PHASING_HALT_EMAILS", "phasing")
if PHASING_HALT_EMAILS not in ("phasing", "ubuntu"):
    raise ImproperlyConfigured("PHASING_HALT_EMAILS is phasing or ubuntu")
PHASING_HALT_EMAILS_CC = env_str("PHASING_HALT_EMAILS_CC", "")
SERVER_EMAIL = DEFAULT_FROM_EMAIL


if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
    # Nothing in the pages reads the CSRF cookie from script (forms carry the token).
    CSRF_COOKIE_HTTPONLY = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# Production logs one JSON object per line, each with the publication, the tick and the
# source it is about (packages.log_context); a developer's terminal gets plain lines.
LOG_FORMAT = env_str("LOG_FORMAT", "plain" if DEBUG else "json")
if LOG_FORMAT not in ("json", "plain"):
    raise ImproperlyConfigured(f"LOG_FORMAT is json or plain, not {LOG_FORMAT!r}")
LOGGING = logging_config(log_format=LOG_FORMAT, level=env_str("LOG_LEVEL", "INFO"))
