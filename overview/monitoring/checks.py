"""Invariants of a deployment, as system checks with ids."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from packages import links

_PUBLICATION_SOURCES = {"simulator", "launchpad", "apt"}
_CRASH_SOURCES = {"simulator", "local", "errortracker", "intake"}


@checks.register(checks.Tags.compatibility, deploy=True)
def broker_configured_in_production(app_configs, **kwargs):
    if settings.CELERY_BROKER_URL.startswith(("filesystem://", "memory://")):
        return [
            checks.Warning(
                "Celery uses an embedded broker; set REDIS_URL or CELERY_BROKER_URL in production.",
                id="overview.W001",
            )
        ]
    return []


@checks.register()
def sources_known(app_configs, **kwargs):
    errors = []
    if settings.PHASING_PUBLICATION_SOURCE not in _PUBLICATION_SOURCES:
        errors.append(
            checks.Error(
                f"PHASING_PUBLICATION_SOURCE is {settings.PHASING_PUBLICATION_SOURCE!r}",
                hint=f"Use one of {sorted(_PUBLICATION_SOURCES)}.",
                id="overview.E001",
            )
        )
    if settings.PHASING_CRASH_SOURCE not in _CRASH_SOURCES:
        errors.append(
            checks.Error(
                f"PHASING_CRASH_SOURCE is {settings.PHASING_CRASH_SOURCE!r}",
                hint=f"Use one of {sorted(_CRASH_SOURCES)}.",
                id="overview.E002",
            )
        )
    return errors


@checks.register()
def link_templates_usable(app_configs, **kwargs):
    """Every PHASING_LINK_* template builds http(s) URLs from the names it may use."""
    return [
        checks.Error(problem, hint="Leave it empty for no link.", id="overview.E003")
        for setting in links.PLACEHOLDERS
        if (problem := links.template_problem(setting, getattr(settings, setting, "")))
    ]
