"""Settings load from the environment, with safe defaults and loud errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Set for this test run (settings_test, the browser tests), not by a deployment.
TEST_RUN_ONLY = {"DEBUG", "SECRET_KEY", "SECURE_SSL_REDIRECT", "DJANGO_ALLOW_ASYNC_UNSAFE"}
PROBE = (
    "import json, django; from django.conf import settings as s; django.setup(); "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], 'broker': s.CELERY_BROKER_URL, "
    "'cache': s.CACHES['default']['BACKEND'], 'debug': s.DEBUG, 'hosts': s.ALLOWED_HOSTS, "
    "'email': s.EMAIL_BACKEND}))"
)


def load(tmp_path, **env) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in TEST_RUN_ONLY | {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}
    }
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "phasing_site.settings", "PHASING_VAR_DIR": str(tmp_path)}, **env
    )
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_with_nothing_set_the_embedded_default_needs_no_server(tmp_path):
    result = load(tmp_path, DEBUG="1")
    values = json.loads(result.stdout)
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["broker"] == "filesystem://localhost/"
    assert values["cache"].endswith("FileBasedCache")
    assert values["email"].endswith("console.EmailBackend")
    assert (tmp_path / "broker" / "processed").is_dir()


def test_with_postgresql_and_redis_set_it_uses_them(tmp_path):
    result = load(
        tmp_path,
        DEBUG="0",
        SECRET_KEY="x" * 60,
        ALLOWED_HOSTS="phasing.example.org",
        DATABASE_URL="postgres://postgres@127.0.0.1:5432/phasing",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    values = json.loads(result.stdout)
    assert values["engine"] == "phasing_site.postgresql"  # Django's, with a client deadline
    assert values["broker"] == "redis://127.0.0.1:6379/0"
    assert values["cache"].endswith("RedisCache")
    assert values["hosts"] == ["phasing.example.org"]
    assert values["email"].endswith("smtp.EmailBackend")


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEBUG": "maybe"}, "DEBUG must be a boolean"),
        ({"DEBUG": "0"}, "SECRET_KEY must be set"),
        ({"DEBUG": "1", "EMAIL_PORT": "twenty-five"}, "EMAIL_PORT must be a whole number"),
        ({"DEBUG": "1", "PHASING_APT_SUITES": "noble"}, "PHASING_APT_SUITES: 'noble' is not"),
        ({"DEBUG": "1", "PHASING_PASSWORD_LOGIN": "sso"}, "PHASING_PASSWORD_LOGIN must be a"),
        ({"DEBUG": "1", "PHASING_WEBHOOKS_TIMEOUT": "0"}, "PHASING_WEBHOOKS_TIMEOUT must be at"),
        (
            {"DEBUG": "1", "PHASING_JUDGE_IGNORERS": "-0.01"},
            "PHASING_JUDGE_IGNORERS must be at least 0 and below 0.5, not -0.01",
        ),
        (
            {"DEBUG": "1", "PHASING_JUDGE_ALPHA": "0.5"},
            "PHASING_JUDGE_ALPHA must be above 0 and below 0.5, not 0.5",
        ),
    ],
)
def test_a_bad_or_missing_value_stops_start_up_with_a_clear_message(tmp_path, env, message):
    result = load(tmp_path, **env)
    assert result.returncode != 0
    assert message in result.stderr


def test_an_issuer_turns_single_sign_on_on_and_lets_the_sign_out_reach_the_provider(tmp_path):
    probe = (
        "import json, django; from django.conf import settings as s; django.setup(); "
        "print(json.dumps({'backends': s.AUTHENTICATION_BACKENDS, 'scopes': s.OIDC_RP_SCOPES, "
        "'form': s.CONTENT_SECURITY_POLICY['DIRECTIVES']['form-action']}))"
    )
    env = {k: v for k, v in os.environ.items() if k not in TEST_RUN_ONLY}
    env.update(
        DJANGO_SETTINGS_MODULE="phasing_site.settings",
        PHASING_VAR_DIR=str(tmp_path),
        DEBUG="1",
        PHASING_OIDC_ISSUER="https://sso.example.org/realms/ubuntu/",
        PHASING_OIDC_SCOPES="openid,email,teams",
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    values = json.loads(result.stdout)
    assert values["backends"][-1] == "packages.sso.backends.SingleSignOnBackend"
    assert values["scopes"] == "openid email teams"
    assert values["form"] == ["'self'", "https://sso.example.org"]


def test_production_settings_pass_check_deploy(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in TEST_RUN_ONLY}
    env.update(
        DJANGO_SETTINGS_MODULE="phasing_site.settings",
        PHASING_VAR_DIR=str(tmp_path),
        DEBUG="0",
        SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
        ALLOWED_HOSTS="phasing.example.org",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_checkout_with_nothing_set_runs_as_development_and_a_deployment_key_turns_debug_off(
    tmp_path,
):
    assert json.loads(load(tmp_path).stdout)["debug"] is True
    deployed = load(tmp_path, SECRET_KEY="k" * 60, ALLOWED_HOSTS="phasing.example.org")
    assert json.loads(deployed.stdout)["debug"] is False


def test_production_cookies_are_secure_http_only_and_same_site(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in TEST_RUN_ONLY}
    env.update(
        DJANGO_SETTINGS_MODULE="phasing_site.settings",
        PHASING_VAR_DIR=str(tmp_path),
        DEBUG="0",
        SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
        ALLOWED_HOSTS="phasing.example.org",
    )
    probe = (
        "import json, django; from django.conf import settings as s; django.setup(); "
        "print(json.dumps([s.SESSION_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, "
        "s.SESSION_COOKIE_SAMESITE, s.CSRF_COOKIE_SECURE, s.CSRF_COOKIE_HTTPONLY, "
        "s.CSRF_COOKIE_SAMESITE, s.PHASING_PRIVILEGED_SESSION_AGE.total_seconds()]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert json.loads(result.stdout) == [True, True, "Lax", True, True, "Lax", 8 * 3600.0]


@pytest.mark.django_db
def test_postgresql_never_compiles_phasings_statements_just_in_time():
    """On an archive's tables the planner's estimates made PostgreSQL JIT-compile each
    ingest statement, 1.7 s a batch for no gain: the connections turn JIT off."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's JIT")
    with connection.cursor() as cursor:
        cursor.execute("SHOW jit")
        assert cursor.fetchone() == ("off",)
