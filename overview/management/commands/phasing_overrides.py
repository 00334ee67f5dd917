"""Import and export overrides in the format of Ubuntu's phased-updates-overrides.txt.

Each line is `source package, version, THING`, where THING is an error-tracker problem
URL or `increased-rate` (ubuntu-project-docs, docs/SRU/internal.rst). Ubuntu's file
always names a version; we also read `*` or an empty version as "all versions" and
write `*` for them. Blank lines and lines starting with `#` are skipped.

A problem URL is matched against the buckets' error-tracker links, then against our own
bucket pages (PHASING_SITE_URL/problems/<id>/); an unknown error-tracker URL becomes a new
bucket, so the override applies once crashes arrive. Bad lines are reported with their
number and skipped; the good lines are imported together, in one transaction.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.urls import Resolver404, resolve
from django.utils import timezone

from overview.models import ErrorBucket, Override, ProblemKind
from overview.triage.overrides import ALL_VERSIONS, override_create
from packages.domain import inputs
from packages.models import SourcePackage


@dataclass(frozen=True)
class Line:
    number: int
    package: str
    version: str
    kind: str
    bucket: ErrorBucket | None = None
    new_bucket_url: str = ""


class BadLine(Exception):
    pass


def _own_bucket(url: str) -> ErrorBucket | None:
    """Our bucket page URL, or None when the URL is not one of ours."""
    parsed = urlparse(url)
    if parsed.netloc != urlparse(settings.PHASING_SITE_URL).netloc:
        return None
    try:
        match = resolve(parsed.path)
    except Resolver404:
        return None
    if match.view_name != "overview:problem":
        return None
    try:
        return ErrorBucket.objects.get(pk=match.kwargs["pk"])
    except ErrorBucket.DoesNotExist:
        raise BadLine(f"there is no problem {match.kwargs['pk']} here") from None


def _known_bucket(url: str) -> ErrorBucket | None:
    variants = {url, url.rstrip("/"), url.rstrip("/") + "/"}
    return ErrorBucket.objects.filter(web_link__in=variants).order_by("pk").first()


def parse_line(number: int, text: str) -> Line | None:
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    fields = [field.strip() for field in next(csv.reader([stripped], skipinitialspace=True))]
    if len(fields) != 3:
        raise BadLine(f"expected 'source package, version, THING', got {len(fields)} fields")
    package, version, thing = fields
    if version == ALL_VERSIONS:
        version = ""
    why = inputs.first_problem(
        {
            "the source package": inputs.source_name_problem(package),
            "the version": inputs.version_problem(version, blank=True),
        }
    )
    if why:
        raise BadLine(why)
    if thing == Override.INCREASED_RATE:
        return Line(number, package, version, ProblemKind.INCREASED_RATE)
    if not thing or inputs.link_problem(thing):
        raise BadLine(f"THING is a problem URL or 'increased-rate', not {thing!r:.100}")
    bucket = _own_bucket(thing) or _known_bucket(thing)
    if bucket is not None:
        return Line(number, package, version, ProblemKind.NEW_BUCKET, bucket=bucket)
    return Line(number, package, version, ProblemKind.NEW_BUCKET, new_bucket_url=thing)


def export_lines() -> list[str]:
    site = settings.PHASING_SITE_URL.rstrip("/")
    rows = []
    for override in Override.objects.filter(revoked_at__isnull=True).select_related(
        "source_package", "bucket"
    ):
        if override.kind == ProblemKind.DEPENDENTS:
            continue  # Phasing's own kind: Ubuntu's file and phased-updater have no such line
        if override.bucket is None:  # the rate: no bucket
            thing = Override.INCREASED_RATE
        else:
            thing = override.bucket.web_link or f"{site}{override.bucket.get_absolute_url()}"
        rows.append((override.source_package.name, override.version or ALL_VERSIONS, thing))
    return [", ".join(row) for row in sorted(rows)]


class Command(BaseCommand):
    help = "Import or export overrides as Ubuntu's phased-updates-overrides.txt lines."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="operation", required=True)
        importing = sub.add_parser("import", help="Read overrides from FILE ('-' for stdin)")
        importing.add_argument("file")
        importing.add_argument("--actor", help="User name to record as having made them")
        exporting = sub.add_parser("export", help="Write the live overrides to FILE or stdout")
        exporting.add_argument("file", nargs="?")

    def handle(self, *args, operation: str, **options) -> None:
        if operation == "export":
            self._export(options.get("file"))
        else:
            self._import(options["file"], options.get("actor"))

    def _export(self, file: str | None) -> None:
        text = "".join(f"{line}\n" for line in export_lines())
        if file and file != "-":
            Path(file).write_text(text, encoding="utf-8")
            self.stderr.write(f"wrote {text.count(chr(10))} overrides to {file}")
        else:
            self.stdout.write(text, ending="")

    def _import(self, file: str, actor_username: str | None) -> None:
        actor = None
        if actor_username:
            User = get_user_model()
            try:
                actor = User.objects.get(**{User.USERNAME_FIELD: actor_username})
            except User.DoesNotExist:
                raise CommandError(f"no user called {actor_username!r}") from None
        try:
            if file == "-":
                text = sys.stdin.read()
            else:
                text = Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"cannot read {file}: {error}") from error

        lines: list[Line] = []
        bad = 0
        for number, raw in enumerate(text.splitlines(), start=1):
            try:
                line = parse_line(number, raw)
            except BadLine as error:
                bad += 1
                self.stderr.write(f"{file}:{number}: skipped: {error}")
                continue
            if line is not None:
                lines.append(line)

        now = timezone.now()
        created = existing = 0
        name = None if actor else "import"
        with transaction.atomic():
            for line in lines:
                package, _ = SourcePackage.objects.get_or_create(name=line.package)
                bucket = line.bucket
                if line.new_bucket_url:
                    bucket, _ = ErrorBucket.objects.get_or_create(
                        signature=line.new_bucket_url,
                        defaults={"web_link": line.new_bucket_url, "source_package": package},
                    )
                try:
                    override = override_create(
                        source_package=package,
                        version=line.version,
                        kind=line.kind,
                        bucket=bucket,
                        actor=actor,
                        actor_name=name,
                        reason=f"Imported from {Path(file).name}, line {line.number}",
                        now=now,
                    )
                except ValidationError as error:
                    raise CommandError(
                        f"{file}:{line.number}: {'; '.join(error.messages)}"
                    ) from error
                if override.created_at == now:
                    created += 1
                else:
                    existing += 1
        self.stdout.write(
            f"imported {created} overrides, {existing} already present, {bad} lines skipped"
        )
