"""How long a signed-in session lasts: shorter for the people who can change phasing,
read crash reports or administer accounts than for everyone else."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest


def is_privileged(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff, superusers, and members of any group (triagers, archive admins)."""
    if getattr(user, "is_staff", False) or getattr(user, "is_superuser", False):
        return True
    groups = getattr(user, "groups", None)
    return bool(groups is not None and groups.exists())


def shorten_privileged_session(
    sender: Any, request: HttpRequest | None, user: AbstractBaseUser, **kwargs: Any
) -> None:
    """On login (the `user_logged_in` signal): a privileged session ends after
    PHASING_PRIVILEGED_SESSION_AGE, or when the browser closes if that is sooner."""
    if request is None or not hasattr(request, "session") or not is_privileged(user):
        return
    request.session.set_expiry(int(settings.PHASING_PRIVILEGED_SESSION_AGE.total_seconds()))
