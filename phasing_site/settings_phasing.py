"""The product's own settings, read from the environment (see .env.example): which sources
the controller talks to, single sign-on, webhooks, links out, and the judges' thresholds.
phasing_site.settings reads them in; every other setting is there."""

from __future__ import annotations

from datetime import timedelta

from phasing_site.env import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_pairs,
    env_seconds,
    env_str,
)

# Which sources the controller talks to: "simulator" (the embedded default),
# "launchpad", "apt" for publications; "simulator", "errortracker", "local", "intake"
# (reports machines post to this site, docs/self-hosted.md) for crashes.
PHASING_PUBLICATION_SOURCE = env_str("PHASING_PUBLICATION_SOURCE", "simulator")
PHASING_CRASH_SOURCE = env_str("PHASING_CRASH_SOURCE", "simulator")
# The whoopsie-compatible intake (POST /<system id>, docs/self-hosted.md), read by the
# "intake" crash source: the largest body read, reports one system may send an hour, and
# how many days a received report is kept (a daily purge).
PHASING_INTAKE_MAX_BYTES = env_int("PHASING_INTAKE_MAX_BYTES", 5 * 1024 * 1024, minimum=1024)
PHASING_INTAKE_REPORTS_PER_HOUR = env_int("PHASING_INTAKE_REPORTS_PER_HOUR", 60, minimum=1)
PHASING_INTAKE_RETENTION_DAYS = env_int("PHASING_INTAKE_RETENTION_DAYS", 30, minimum=1)
# Fleet agents' reports (agent/): hours a machine's last report counts for its update.
PHASING_FLEET_REPORT_HOURS = env_int("PHASING_FLEET_REPORT_HOURS", 48, minimum=1)
# Set: fleet reports are taken only with "Authorization: Bearer <token>" (they feed the
# judge, so made-up machines must not). Empty: anyone who reaches the site may report.
PHASING_FLEET_TOKEN = env_str("PHASING_FLEET_TOKEN")
PHASING_SIMULATOR_SEED = env_int("PHASING_SIMULATOR_SEED", 1)
PHASING_SIMULATOR_PACKAGES = env_int("PHASING_SIMULATOR_PACKAGES", 300, minimum=1)
PHASING_SIMULATOR_MEAN_DAYS = float(env_int("PHASING_SIMULATOR_MEAN_DAYS", 40, minimum=1))
PHASING_HTTP_TIMEOUT = float(env_int("PHASING_HTTP_TIMEOUT", 10, minimum=1))
PHASING_LAUNCHPAD_API_ROOT = env_str(
    "PHASING_LAUNCHPAD_API_ROOT", "https://api.launchpad.net/devel/"
)
PHASING_LAUNCHPAD_DISTRIBUTION = env_str("PHASING_LAUNCHPAD_DISTRIBUTION", "ubuntu")
PHASING_LAUNCHPAD_CONSUMER_KEY = env_str("PHASING_LAUNCHPAD_CONSUMER_KEY", "phasing")
PHASING_LAUNCHPAD_TOKEN = env_str("PHASING_LAUNCHPAD_TOKEN")
PHASING_LAUNCHPAD_TOKEN_SECRET = env_str("PHASING_LAUNCHPAD_TOKEN_SECRET")
# The archive whose Packages files give the binaries' Depends and Breaks (dependent updates
# phase together); empty: not read. Only these architectures' indexes are read.
PHASING_LAUNCHPAD_PACKAGES_ARCHIVE = env_str("PHASING_LAUNCHPAD_PACKAGES_ARCHIVE")
PHASING_LAUNCHPAD_PACKAGES_ARCHITECTURES = env_list(
    "PHASING_LAUNCHPAD_PACKAGES_ARCHITECTURES", ["amd64"]
)
PHASING_ERRORTRACKER_API_ROOT = env_str(
    "PHASING_ERRORTRACKER_API_ROOT", "https://errors.ubuntu.com/api/1.0/"
)
PHASING_APT_ARCHIVE = env_str("PHASING_APT_ARCHIVE")
PHASING_APT_GPG_KEY = env_str("PHASING_APT_GPG_KEY")
PHASING_APT_GPG_HOME = env_str("PHASING_APT_GPG_HOME")
# The phased suite of each release, "codename=suite" (default <codename>-updates): apt
# phases any origin that carries the field, a PPA's "noble" or a vendor's own suite too.
PHASING_APT_SUITES = env_pairs("PHASING_APT_SUITES")
# Suites whose versions count as the version an update replaces ({codename} is replaced).
PHASING_APT_PREVIOUS_SUITES = env_list(
    "PHASING_APT_PREVIOUS_SUITES", ["{codename}", "{codename}-security", "{codename}-updates"]
)
# Single sign-on over OpenID Connect (docs/teams.md): on when an issuer is set. The
# provider's endpoints come from its discovery document; a groups claim maps to the
# triagers and archive-admins groups at each sign-in.
PHASING_OIDC_ISSUER = env_str("PHASING_OIDC_ISSUER").rstrip("/")
PHASING_OIDC_ENABLED = bool(PHASING_OIDC_ISSUER)
PHASING_OIDC_PROVIDER_NAME = env_str("PHASING_OIDC_PROVIDER_NAME", "single sign-on")
PHASING_OIDC_GROUPS_CLAIM = env_str("PHASING_OIDC_GROUPS_CLAIM", "groups")
PHASING_OIDC_TRIAGER_GROUPS = env_list("PHASING_OIDC_TRIAGER_GROUPS", ["triagers"])
PHASING_OIDC_ARCHIVE_ADMIN_GROUPS = env_list(
    "PHASING_OIDC_ARCHIVE_ADMIN_GROUPS", ["archive-admins"]
)
# A session from single sign-on lasts this long: rights removed at the provider go at the
# next sign-in.
PHASING_OIDC_SESSION_SECONDS = env_int("PHASING_OIDC_SESSION_SECONDS", 8 * 3600, minimum=60)
# Off: only superusers and these break-glass accounts may log in with a password.
PHASING_PASSWORD_LOGIN = env_bool("PHASING_PASSWORD_LOGIN", True)
PHASING_BREAK_GLASS_USERS = env_list("PHASING_BREAK_GLASS_USERS", [])
# mozilla-django-oidc's own settings, from the ones above.
OIDC_RP_CLIENT_ID = env_str("PHASING_OIDC_CLIENT_ID")
OIDC_RP_CLIENT_SECRET = env_str("PHASING_OIDC_CLIENT_SECRET")
OIDC_RP_SCOPES = " ".join(env_list("PHASING_OIDC_SCOPES", ["openid", "email", "profile", "groups"]))
OIDC_RP_SIGN_ALGO = env_str("PHASING_OIDC_SIGN_ALGO", "RS256")
OIDC_USE_PKCE = True
OIDC_USE_NONCE = True
OIDC_STORE_ID_TOKEN = True  # for the provider's logout (id_token_hint)
# Webhooks and chat notices (docs/teams.md). Private, loopback and link-local addresses
# are refused unless allowed here (a receiver on the same network, the tests).
PHASING_WEBHOOKS_ALLOW_PRIVATE = env_bool("PHASING_WEBHOOKS_ALLOW_PRIVATE", False)
PHASING_WEBHOOKS_TIMEOUT = float(env_int("PHASING_WEBHOOKS_TIMEOUT", 5, minimum=1))
# Attempts of one delivery (backoff 30 s, 1, 2, 4 min ... at most 15 min apart).
PHASING_WEBHOOKS_MAX_ATTEMPTS = env_int("PHASING_WEBHOOKS_MAX_ATTEMPTS", 8, minimum=1)
# Failed attempts in a row, across deliveries, that disable an endpoint.
PHASING_WEBHOOKS_DISABLE_AFTER = env_int("PHASING_WEBHOOKS_DISABLE_AFTER", 20, minimum=1)
# Links out (packages/links.py): URL templates, Ubuntu's by default; empty means no link.
# Each is checked at start-up (overview.E003): http(s) only, known placeholders only.
PHASING_LINK_SOURCE = env_str(
    "PHASING_LINK_SOURCE", "https://launchpad.net/ubuntu/+source/{source}/+publishinghistory"
)
PHASING_LINK_VERSION = env_str(
    "PHASING_LINK_VERSION", "https://launchpad.net/ubuntu/+source/{source}/{version}"
)
PHASING_LINK_CHANGES = env_str(
    "PHASING_LINK_CHANGES",
    "https://launchpad.net/ubuntu/+archive/primary/+files/{source}_{version_no_epoch}_source.changes",
)
PHASING_LINK_BUG = env_str("PHASING_LINK_BUG", "https://bugs.launchpad.net/bugs/{bug}")
PHASING_LINK_PERSON = env_str("PHASING_LINK_PERSON", "https://launchpad.net/~{person}")
PHASING_LINK_BUCKET = env_str(
    "PHASING_LINK_BUCKET", "https://errors.ubuntu.com/problem/{signature_sha1}"
)
PHASING_LINK_PACKAGE_ERRORS = env_str(
    "PHASING_LINK_PACKAGE_ERRORS", "https://errors.ubuntu.com/?package={source}&period=month"
)
# Error-tracker semantics (errors.ubuntu.com, src/errors/cassie.py) as the default thresholds.
PHASING_NEW_BUCKET_MIN_SYSTEMS = env_int("PHASING_NEW_BUCKET_MIN_SYSTEMS", 3, minimum=1)
PHASING_RATE_MIN_CRASHES_TODAY = env_int("PHASING_RATE_MIN_CRASHES_TODAY", 3, minimum=1)
PHASING_RATE_BASELINE_DAYS = env_int("PHASING_RATE_BASELINE_DAYS", 15, minimum=1)
PHASING_RATE_MIN_DIFFERENCE = env_int("PHASING_RATE_MIN_DIFFERENCE", 1, minimum=0)
# Package install failures (apport's ProblemType: Package) count like crashes: a new
# install-failure bucket seen on this many systems halts an update; off: never a problem.
PHASING_INSTALL_FAILURES = env_bool("PHASING_INSTALL_FAILURES", True)
PHASING_INSTALL_FAILURE_MIN_SYSTEMS = env_int("PHASING_INSTALL_FAILURE_MIN_SYSTEMS", 3, minimum=1)
PHASING_EXCLUDE_PROPOSED = env_bool("PHASING_EXCLUDE_PROPOSED", True)
# The sequential judge (overview.judges.sequential): the chance it ever halts an update whose crash
# rate did not rise, over the update's whole ramp however often it looks; the rate ratio
# within which an update counts as healthy; and the chance of calling an update healthy
# when its rate rose by more than that.
PHASING_JUDGE_ALPHA = env_float("PHASING_JUDGE_ALPHA", 0.01, above=0, below=0.5)
PHASING_JUDGE_TOLERANCE = env_float("PHASING_JUDGE_TOLERANCE", 1.2, above=1, below=10)
PHASING_JUDGE_ALPHA_HEALTHY = env_float("PHASING_JUDGE_ALPHA_HEALTHY", 0.05, above=0, below=0.5)
# The previous version's history (its crashes before the update) narrows the uptake the
# sequential test uses and halts through the anchored test where it is read against the
# release's other packages' crashes, day by day and hour by hour, so that what moves every
# package cancels. On: also where there are too few of those, against its own days alone
# (a level shift of the whole release then reads as a rise: for a fleet known to be
# steady). docs/judges.md.
PHASING_JUDGE_HISTORY = env_bool("PHASING_JUDGE_HISTORY", False)
# The share of machines the sequential test allows to take an update whatever its
# percentage (chroots, Always-Include-Phased-Updates, tools that ignore phasing): its
# regression test counts them on the new version, so that they never read as a rise.
PHASING_JUDGE_IGNORERS = env_float("PHASING_JUDGE_IGNORERS", 0.05, at_least=0, below=0.5)
# Mean hours from a machine becoming eligible to installing, believed before any
# measurement (overview.judges.exposure measures it from other packages' crash reports).
PHASING_UPTAKE_HOURS = env_float("PHASING_UPTAKE_HOURS", 8.0, above=0, below=1000)
# Diagnostic: scales the uptake estimate (1 in production; the backtest varies it).
# Expediting to 100% and resuming an update the controller halted take a second archive
# admin's sign-off before they take effect (four eyes).
PHASING_SIGN_OFF_REQUIRED = env_bool("PHASING_SIGN_OFF_REQUIRED", False)
# The sequential judge runs again only for updates whose evidence changed since their last
# judgement (overview.judges.reuse); off: every update is judged every tick.
PHASING_JUDGEMENT_REUSE = env_bool("PHASING_JUDGEMENT_REUSE", True)
# Crash reports are kept this many days (whole days; the counters are kept for ever), and
# their day partitions (PostgreSQL) created this many days ahead.
PHASING_CRASH_REPORT_RETENTION_DAYS = env_int("PHASING_CRASH_REPORT_RETENTION_DAYS", 90, minimum=1)
PHASING_CRASH_PARTITIONS_AHEAD = env_int("PHASING_CRASH_PARTITIONS_AHEAD", 7, minimum=1)
# Connections that store a window of crash reports at once, as batches of one release
# each (PostgreSQL; 1: one connection, as on SQLite).
PHASING_INGEST_CONNECTIONS = env_int("PHASING_INGEST_CONNECTIONS", 2, minimum=1)
# The period over which "crashes averted" by a halt are estimated, at 100%.
PHASING_AVERTED_DAYS = env_int("PHASING_AVERTED_DAYS", 7, minimum=1)

PHASING_TICK_INTERVAL = env_seconds("PHASING_TICK_INTERVAL", timedelta(minutes=5))
# The beat's tick sends one task per release with updates in phasing (overview.tasks.
# tick_release), which several workers take at once; off: one tick decides every update.
PHASING_TICK_PER_RELEASE = env_bool("PHASING_TICK_PER_RELEASE", False)
PHASING_SYNC_INTERVAL = env_seconds("PHASING_SYNC_INTERVAL", timedelta(minutes=5))
# The sync's lock is held this long past its last sign of work: a worker killed mid-sync
# delays the next sync by at most this much.
PHASING_SYNC_LEASE = env_seconds("PHASING_SYNC_LEASE", timedelta(minutes=5))
# The first retry of an email or a write-back that failed; each next one waits twice as long.
PHASING_RETRY_BACKOFF = env_seconds("PHASING_RETRY_BACKOFF", timedelta(seconds=30))
# Each scheduled change asks a worker to run it at its time; this periodic look runs what
# no worker took (the broker was down): a change runs at most this late.
PHASING_SCHEDULED_CHANGES_INTERVAL = env_seconds(
    "PHASING_SCHEDULED_CHANGES_INTERVAL", timedelta(minutes=5)
)
# Older crash data than this counts as unavailable: the controller holds rather than advance.
PHASING_CRASH_DATA_MAX_AGE = env_seconds(
    "PHASING_CRASH_DATA_MAX_AGE", max(timedelta(minutes=30), 3 * PHASING_SYNC_INTERVAL)
)
