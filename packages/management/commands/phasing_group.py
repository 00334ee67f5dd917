"""Add a person to, or remove them from, the triagers or archive-admins group."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from packages.roles import ARCHIVE_ADMINS, GROUP_PERMISSIONS


class Command(BaseCommand):
    help = "phasing_group add|remove USERNAME triagers|archive-admins"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("operation", choices=("add", "remove"))
        parser.add_argument("username")
        parser.add_argument("group", choices=sorted(GROUP_PERMISSIONS))

    def handle(self, *args, operation: str, username: str, group: str, **options) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist:
            raise CommandError(f"no user called {username!r}") from None
        try:
            role = Group.objects.get(name=group)
        except Group.DoesNotExist:
            raise CommandError(f"the {group} group is missing: run migrate") from None

        if operation == "add":
            user.groups.add(role)
            # Archive admins work in the Django admin, which only lets staff in.
            if group == ARCHIVE_ADMINS and not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
            self.stdout.write(f"{username} is in {group}")
        else:
            user.groups.remove(role)
            self.stdout.write(f"{username} is not in {group}")
