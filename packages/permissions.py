"""Who may see and do what. The one place that decides, so pages, admin and API agree."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

CRASH_REPORT_CONTENT = "overview.view_crash_report_content"
OVERRIDE_PROBLEM = "overview.override_problem"
CHANGE_PHASING = "packages.change_phasing"
VIEW_METRICS = "overview.view_metrics"


def _has(user: User | AnonymousUser | None, perm: str) -> bool:
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return bool(user.is_superuser or user.has_perm(perm))


def can_read_crash_reports(user: User | AnonymousUser | None) -> bool:
    """Stack traces, environments, package versions and system ids: triagers and superusers."""
    return _has(user, CRASH_REPORT_CONTENT)


def can_override_problems(user: User | AnonymousUser | None) -> bool:
    return _has(user, OVERRIDE_PROBLEM)


def can_change_phasing(user: User | AnonymousUser | None) -> bool:
    """Pause, resume, halt, set, release, freeze and change policy: archive admins."""
    return _has(user, CHANGE_PHASING)


def can_read_metrics(user: User | AnonymousUser | None) -> bool:
    """/metrics, besides the scraper's token: superusers and whoever is given the permission."""
    return _has(user, VIEW_METRICS)


def acting_user(request: HttpRequest) -> User:
    """The signed-in person behind a request that views and admin actions have let through
    (they require a login): the actor their services record."""
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied
    return user
