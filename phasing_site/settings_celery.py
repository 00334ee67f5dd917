"""Celery's settings, read from the environment: the broker (Redis, or a folder for the
embedded default), how long a task may run and how it logs, and the beat's schedule.
phasing_site.settings reads them in."""

from __future__ import annotations

from phasing_site.env import env_bool, env_float, env_str
from phasing_site.paths import VAR_DIR
from phasing_site.settings_phasing import (
    PHASING_SCHEDULED_CHANGES_INTERVAL,
    PHASING_SYNC_INTERVAL,
    PHASING_TICK_INTERVAL,
)

# Celery. Without a broker URL, kombu's filesystem transport lets the web server, the
# worker and beat talk through a folder, so the embedded default needs no server.
# The host is a placeholder the transport ignores; without it kombu warns on every connection.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", env_str("REDIS_URL") or "filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _broker_dir = VAR_DIR / "broker"
    for _folder in ("processed", "control"):
        (_broker_dir / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir),
        "data_folder_out": str(_broker_dir),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
else:
    # A Redis that hangs: give up within seconds (connect, then each read), and retry
    # publishing once, so a committed change that queues a task answers as committed.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "socket_connect_timeout": env_float("CELERY_BROKER_SOCKET_TIMEOUT", 2.0),
        "socket_timeout": env_float("CELERY_BROKER_SOCKET_TIMEOUT", 2.0),
        "socket_keepalive": True,
        "retry_on_timeout": False,
    }
CELERY_BROKER_CONNECTION_TIMEOUT = env_float("CELERY_BROKER_SOCKET_TIMEOUT", 2.0)
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 0.5,
}
# One queue per deployment; a second deployment on the same broker names its own.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_TIME_LIMIT = 600
CELERY_TASK_SOFT_TIME_LIMIT = 540
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

CELERY_BEAT_SCHEDULE = {
    # Pull new publications, supersessions and crash data from the configured sources.
    "sync-sources": {
        "task": "overview.tasks.sync_sources",
        "schedule": PHASING_SYNC_INTERVAL.total_seconds(),
    },
    # Advance, hold or halt every update in phasing (the phased-updater's job).
    "controller-tick": {
        "task": "overview.tasks.tick",
        "schedule": PHASING_TICK_INTERVAL.total_seconds(),
    },
    # Create the crash reports' coming day partitions; drop those past retention.
    "crash-partitions": {"task": "overview.tasks.crash_partitions", "schedule": 3600.0},
    # Retry write-backs to the source and halt emails that did not go out.
    "reconcile": {"task": "overview.tasks.reconcile", "schedule": 300.0},
    # Send webhook deliveries that no task sent (broker down, a lost retry).
    "webhook-deliveries": {"task": "overview.notices.send_due", "schedule": 60.0},
    # Forget crash reports and fleet reports machines sent before the retention.
    "purge-intake": {"task": "overview.tasks.purge_intake", "schedule": 86400.0},
    # Run the archive admins' scheduled changes a worker did not run at their time, once.
    "scheduled-changes": {
        "task": "packages.tasks.run_scheduled_changes",
        "schedule": PHASING_SCHEDULED_CHANGES_INTERVAL.total_seconds(),
    },
}

# What a task prints (the console email backend's emails, in development) is information,
# not a warning.
CELERY_WORKER_REDIRECT_STDOUTS_LEVEL = "INFO"
# Workers log through Django's LOGGING (phasing_site.settings) (JSON in production), not Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
