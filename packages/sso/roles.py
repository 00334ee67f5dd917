"""The groups claim, read strictly, and the rights it gives: at each sign-in a person is in
exactly the privileged groups their provider's groups map to, so removing them there
removes their rights here at their next sign-in."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User

from packages.roles import ARCHIVE_ADMINS, TRIAGERS

log = logging.getLogger(__name__)


class BadGroupsClaim(ValueError):
    """A groups claim that is there but is not a list of names."""


def provider_groups(claims: Mapping[str, Any]) -> list[str] | None:
    """The provider's group names; None when the claim is missing (no groups granted)."""
    name = settings.PHASING_OIDC_GROUPS_CLAIM
    if name not in claims:
        return None
    value = claims[name]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BadGroupsClaim(f"the {name!r} claim is not a list of names: {type(value).__name__}")
    return value


def roles_of(groups: list[str] | None) -> set[str]:
    """The privileged groups here that the provider's groups map to."""
    mapping = {
        TRIAGERS: set(settings.PHASING_OIDC_TRIAGER_GROUPS),
        ARCHIVE_ADMINS: set(settings.PHASING_OIDC_ARCHIVE_ADMIN_GROUPS),
    }
    held = set(groups or ())
    return {role for role, names in mapping.items() if held & names}


def roles_apply(user: User, roles: set[str]) -> None:
    """Make `user` a member of exactly `roles` among the privileged groups; staff (the
    admin's door) follows archive-admins. Other groups and superuser are left alone: a
    provider never makes a superuser."""
    for group in Group.objects.filter(name__in=(TRIAGERS, ARCHIVE_ADMINS)):
        if group.name in roles:
            user.groups.add(group)
        else:
            user.groups.remove(group)
    staff = ARCHIVE_ADMINS in roles or user.is_superuser
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
