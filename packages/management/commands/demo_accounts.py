"""Create the demo accounts of `make run`: two archive admins and one triager.

The passwords are published here on purpose, so the command refuses to run with DEBUG
off unless told --force.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError, CommandParser

from packages.roles import ARCHIVE_ADMINS, TRIAGERS

DEMO_ACCOUNTS = (
    # username, password, group, is_staff
    ("admin", "phasing-admin-demo", ARCHIVE_ADMINS, True),
    # A second archive admin, to sign off what the first asks (PHASING_SIGN_OFF_REQUIRED).
    ("admin2", "phasing-admin2-demo", ARCHIVE_ADMINS, True),
    ("triager", "phasing-triager-demo", TRIAGERS, False),
)


class Command(BaseCommand):
    help = "Create (or reset) the demo archive admins and triager accounts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--force", action="store_true", help="Run even with DEBUG off (never in production)"
        )

    def handle(self, *args, force: bool, **options) -> None:
        if not settings.DEBUG and not force:
            raise CommandError("demo accounts have public passwords: DEBUG is off (use --force)")
        User = get_user_model()
        for username, password, group_name, is_staff in DEMO_ACCOUNTS:
            user, created = User.objects.get_or_create(
                **{User.USERNAME_FIELD: username},
                defaults={"email": f"{username}@phasing.example"},
            )
            user.set_password(password)
            user.is_staff = is_staff
            user.is_active = True
            user.save()
            user.groups.add(Group.objects.get(name=group_name))
            verb = "created" if created else "reset"
            self.stdout.write(f"{verb} {username} / {password} ({group_name})")
