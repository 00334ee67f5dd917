"""A small Launchpad on a local HTTP server: state, filters, batches, permissions, errors.

It answers as Launchpad's web service does (API version devel), from these files of the
launchpad tree (lgp171188/launchpad@eafda459, a mirror of Launchpad trunk) and of
lazr.restful 4.0.0 / lazr.batchnavigator 4.0.0:

- batches: see lazr_batches.
- ``Archive.getPublishedSources``/``getPublishedBinaries``: their exported parameters,
  ``created_since_date`` (>=), ``order_by_date`` (newest first, then highest id), and no
  ``distro_series`` on binaries; unknown parameters are ignored (interfaces/archive.py
  566-640 and 702-818, model/archive.py 1005-1128); an unknown operation is a 400
  ``No such operation: <name>`` (lazr.restful _resource.py 755-757).
- ``SourcePackagePublishingHistory.getPublishedBinaries``: the Published and Pending
  records, by binary name, architecture, newest id first (model/publishing.py 393-399,
  2027-2057); ddebs included, ``is_debug`` in devel (interfaces/publishing.py 967-975).
- ``changeOverride`` (model/publishing.py 1156-1289): ddeb -> 400 ``Cannot override ddeb
  publications directly; override the corresponding deb instead.``; same value -> 200
  ``null``; a suite that may not be modified -> 400 ``Cannot change overrides in suite
  '<suite>'`` (Archive.canModifySuite, model/archive.py 1696-1733); otherwise a new Pending
  record (100 stored as null) and the same for the matching ddeb. A read-only token, or a
  caller outside the archive owner's team, gets 401 with zope's Unauthorized text
  (security.py 556-563, webapp/authorization.py 66-91 and 197-206,
  stories/webservice/xx-binary-package-publishing.rst 345-356).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cmp_to_key

from debian.debian_support import version_compare

from tests.fake_http import FakeHTTPServer, Recorded, Reply
from tests.packages.sources.launchpad.fakes import ARCHIVE, bpph, person_entry, spph
from tests.packages.sources.launchpad.lazr_batches import batch

STATUSES = ("Pending", "Published", "Superseded", "Deleted", "Obsolete")
POCKETS = ("Release", "Security", "Updates", "Proposed", "Backports")
DDEB_REFUSAL = "Cannot override ddeb publications directly; override the corresponding deb instead."


CHANGES_PATH = "ubuntu/+archive/primary/+files/"


@dataclass
class Source:
    id: int
    name: str
    version: str
    series: str = "noble"
    pocket: str = "Updates"
    status: str = "Published"
    created: datetime = datetime(2025, 6, 2, 9, 0, tzinfo=UTC)
    published: datetime | None = datetime(2025, 6, 2, 10, 15, tzinfo=UTC)
    signer: str | None = "alice"
    package_creator: str | None = "alice"
    creator: str | None = None
    sponsor: str | None = None
    # The upload's .changes file, served where changesFileUrl() points.
    changes: str = ""


@dataclass
class Binary:
    id: int
    name: str
    source: Source
    arch: str = "amd64"
    percentage: int | None = None
    status: str = "Published"
    created: datetime = datetime(2025, 6, 2, 10, 0, tzinfo=UTC)
    is_debug: bool = False
    creator: str | None = None


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _flag(value: str | None) -> bool:
    return (value or "").lower() == "true"


def _changes_name(source: Source) -> str:
    """<source>_<version without epoch>_source.changes, as an upload names it."""
    return f"{source.name}_{source.version.split(':', 1)[-1]}_source.changes"


def _text(status: int, body: str) -> Reply:
    return Reply(status=status, body=body)


class FakeLaunchpad:
    """Launchpad's primary archive of one distribution, answering under ``/devel/``."""

    def __init__(self, server: FakeHTTPServer, *, now: datetime | None = None) -> None:
        self.server = server
        self.base = server.base_url
        self.now = now or datetime(2025, 6, 3, 12, 0, tzinfo=UTC)
        self.series = {"noble": ("24.04", "Current Stable Release")}
        self.sources: list[Source] = []
        self.binaries: list[Binary] = []
        self.people = {
            "alice": ("Alice Archive", "alice@example.com"),
            "bob": ("Bob Uploader", None),
            "carol": ("Carol Copier", None),
            "phasing-bot": ("Phasing Bot", None),
        }
        # token -> (person, may write): the archive owner's team decides the rest.
        self.tokens = {"tok123": ("phasing-bot", True)}
        self.team = {"phasing-bot"}
        self._next_id = 1000
        server.get("/devel/*", self._get)
        server.get(f"/{CHANGES_PATH}*", self._changes_file)
        server.post("/devel/*", self._post)

    # -- building state -----------------------------------------------------------------

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_source(self, name: str, version: str, **fields) -> Source:
        source = Source(self._id(), name, version, **fields)
        self.sources.append(source)
        return source

    def add_binary(self, source: Source, name: str, **fields) -> Binary:
        binary = Binary(self._id(), name, source, **fields)
        self.binaries.append(binary)
        return binary

    def publish(
        self, name, version, *, binaries=(("amd64", None),), names=None, ddebs=False, **fields
    ) -> Source:
        """A source with one binary record per (name, architecture), as a build makes."""
        source = self.add_source(name, version, **fields)
        for binary_name in names or (name,):
            for arch, percentage in binaries:
                self.add_binary(source, binary_name, arch=arch, percentage=percentage)
                if ddebs:
                    self.add_binary(
                        source,
                        f"{binary_name}-dbgsym",
                        arch=arch,
                        percentage=percentage,
                        is_debug=True,
                    )
        return source

    def delete(self, source: Source) -> None:
        """requestDeletion: statuses flip, no record is added (model/publishing.py 2398-2421)."""
        source.status = "Deleted"
        for binary in self.current(source):
            binary.status = "Deleted"

    def current(self, source: Source) -> list[Binary]:
        return [
            b for b in self.binaries if b.source is source and b.status in ("Published", "Pending")
        ]

    def change_override(self, binary: Binary, percentage: int | None, *, by: str) -> Binary:
        """What changeOverride does: a new Pending record; the old one stays until published."""
        self.now += timedelta(seconds=1)
        return self.add_binary(
            binary.source,
            binary.name,
            arch=binary.arch,
            percentage=percentage,
            status="Pending",
            created=self.now,
            is_debug=binary.is_debug,
            creator=by,
        )

    # -- representations ----------------------------------------------------------------

    def _source_entry(self, source: Source) -> dict:
        entry = spph(
            self.base,
            source.id,
            source.name,
            source.version,
            pocket=source.pocket,
            status=source.status,
            series=source.series,
            published=_iso(source.published),
            signer=source.signer and f"~{source.signer}",
            package_creator=source.package_creator and f"~{source.package_creator}",
            creator=source.creator and f"~{source.creator}",
            sponsor=source.sponsor and f"~{source.sponsor}",
        )
        entry["date_created"] = _iso(source.created)
        return entry

    def _binary_entry(self, binary: Binary) -> dict:
        entry = bpph(
            self.base,
            binary.id,
            binary.name,
            binary.source.version,
            arch=binary.arch,
            percentage=binary.percentage,
            status=binary.status,
            created=_iso(binary.created),
            series=binary.source.series,
            source=(binary.source.name, binary.source.version),
        )
        entry["pocket"] = binary.source.pocket
        entry["is_debug"] = binary.is_debug
        entry["creator_link"] = f"{self.base}/devel/~{binary.creator}" if binary.creator else None
        return entry

    # -- reads ----------------------------------------------------------------------------

    def _get(self, request: Recorded) -> Reply:
        path = request.path.removeprefix("/devel/")
        op = request.param("ws.op")
        if path == "ubuntu/series":
            return batch(
                request, self.base, list(self.series.items()), self._series_entry, named=False
            )
        if path.startswith("~"):
            return self._person(path)
        if path == ARCHIVE.removeprefix("/devel/"):
            if op == "getPublishedSources":
                return self._published_sources(request)
            if op == "getPublishedBinaries":
                return self._published_binaries(request)
            return _text(400, f"No such operation: {op}")
        kind, _, number = path.rpartition("/")
        if kind.endswith("+sourcepub"):
            source = next((s for s in self.sources if s.id == int(number)), None)
            if source is None:
                return _text(404, "Object not found")
            if op == "getPublishedBinaries":
                binaries = sorted(self.current(source), key=lambda b: (b.name, b.arch, -b.id))
                return batch(request, self.base, binaries, self._binary_entry, named=True)
            if op == "changesFileUrl":
                # model/publishing.py changesFileUrl(): the proxied file under the archive
                # on the web host, or None without an upload.
                if not source.changes:
                    return Reply(json=None)
                return Reply(json=f"{self.base}/{CHANGES_PATH}{_changes_name(source)}")
            return Reply(json=self._source_entry(source))
        if kind.endswith("+binarypub"):
            binary = next((b for b in self.binaries if b.id == int(number)), None)
            if binary is None:
                return _text(404, "Object not found")
            return Reply(json=self._binary_entry(binary))
        return _text(404, "Object not found")

    def _changes_file(self, request: Recorded) -> Reply:
        name = request.path.rsplit("/", 1)[-1]
        source = next((s for s in self.sources if _changes_name(s) == name), None)
        if source is None or not source.changes:
            return _text(404, "Not found")
        return _text(200, source.changes)

    def _series_entry(self, item) -> dict:
        name, (version, status) = item
        return {
            "self_link": f"{self.base}/devel/ubuntu/{name}",
            "name": name,
            "version": version,
            "status": status,
            "resource_type_link": f"{self.base}/devel/#distro_series",
        }

    def _person(self, path: str) -> Reply:
        account, _, rest = path[1:].partition("/")
        if account not in self.people:
            return _text(404, "Object not found")
        display, email = self.people[account]
        if rest.startswith("+email/"):
            return Reply(json={"email": email, "self_link": f"{self.base}/devel/{path}"})
        email_link = (
            f"{self.base}/devel/~{account}/+email/{email}"
            if email
            else "tag:launchpad.net:2008:redacted"
        )
        return Reply(json=person_entry(self.base, account, display, email_link))

    def _common_filters(self, request: Recorded, records, name_of) -> list | Reply:
        status, pocket = request.param("status"), request.param("pocket")
        for field, value, allowed in (("status", status, STATUSES), ("pocket", pocket, POCKETS)):
            if value is not None and value not in allowed:
                return _text(
                    400,
                    f'{field}: Invalid value "{value}". Acceptable values are: {", ".join(allowed)}',
                )
        name = request.param("source_name") or request.param("binary_name")
        version = request.param("version")
        if version and not name:
            return _text(
                400, "The 'version' parameter can be used only together with the 'name' parameter."
            )
        since = request.param("created_since_date")
        since_at = datetime.fromisoformat(since) if since else None
        exact = _flag(request.param("exact_match"))
        kept = [
            r
            for r in records
            if (status is None or r[1].status == status)
            and (pocket is None or r[0].pocket == pocket)
            and (not name or (name_of(r) == name if exact else name in name_of(r)))
            and (not version or r[0].version == version)
            and (since_at is None or r[1].created >= since_at)
        ]
        if _flag(request.param("order_by_date")):
            kept.sort(key=lambda r: (r[1].created, r[1].id), reverse=True)
        return kept

    def _published_sources(self, request: Recorded) -> Reply:
        series = (request.param("distro_series") or "").rstrip("/").rpartition("/")[2]
        records = [(s, s) for s in self.sources if not series or s.series == series]
        kept = self._common_filters(request, records, lambda r: r[0].name)
        if isinstance(kept, Reply):
            return kept
        if not _flag(request.param("order_by_date")):
            kept.sort(
                key=cmp_to_key(
                    lambda a, b: (
                        (a[0].name > b[0].name) - (a[0].name < b[0].name)
                        or -version_compare(a[0].version, b[0].version)
                        or b[0].id - a[0].id
                    )
                )
            )
        return batch(request, self.base, [s for s, _ in kept], self._source_entry, named=True)

    def _published_binaries(self, request: Recorded) -> Reply:
        das = (request.param("distro_arch_series") or "").rstrip("/").split("/")[-2:]
        records = [
            (b.source, b)
            for b in self.binaries
            if len(das) < 2 or (b.source.series, b.arch) == tuple(das)
        ]
        kept = self._common_filters(request, records, lambda r: r[1].name)
        if isinstance(kept, Reply):
            return kept
        if not _flag(request.param("order_by_date")):
            kept.sort(key=lambda r: (r[1].name, r[1].arch, -r[1].id))
        return batch(request, self.base, [b for _, b in kept], self._binary_entry, named=True)

    # -- writes ---------------------------------------------------------------------------

    def _post(self, request: Recorded) -> Reply:
        form = request.form
        path = request.path.removeprefix("/devel/")
        kind, _, number = path.rpartition("/")
        binary = next(
            (b for b in self.binaries if kind.endswith("+binarypub") and b.id == int(number)), None
        )
        if binary is None:
            return _text(404, "Object not found")
        if form.get("ws.op") != "changeOverride":
            return _text(400, f"No such operation: {form.get('ws.op')}")
        token = self._token(request.headers.get("Authorization", ""))
        person, may_write = self.tokens.get(token, (None, False))
        if not may_write or person not in self.team:
            return _text(
                401,
                "(<lp.soyuz.model.publishing.BinaryPackagePublishingHistory object at "
                "0x7f3a2b1c4d90>, 'changeOverride', 'launchpad.Edit')",
            )
        if binary.is_debug:
            return _text(400, DDEB_REFUSAL)
        raw = form.get("new_phased_update_percentage")
        try:
            wanted = int(raw) if raw is not None else None
        except ValueError:
            return _text(400, f"new_phased_update_percentage: got '{raw}', expected int")
        if wanted is not None and not 0 <= wanted <= 100:
            return _text(500, "ValueError")
        value = None if wanted == 100 else wanted
        if value == binary.percentage:
            return Reply(body=json.dumps(None).encode())
        if not self.modifiable(binary.source):
            suite = binary.source.series + (
                "" if binary.source.pocket == "Release" else f"-{binary.source.pocket.lower()}"
            )
            return _text(400, f"Cannot change overrides in suite '{suite}'")
        new = self.change_override(binary, value, by=person)
        for ddeb in [
            b
            for b in self.current(binary.source)
            if b.is_debug and b.name == f"{binary.name}-dbgsym" and b.arch == binary.arch
        ]:
            self.change_override(ddeb, value, by=person)
        return Reply(json=self._binary_entry(new))

    def modifiable(self, source: Source) -> bool:
        status = self.series.get(source.series, ("", "Supported"))[1]
        if source.pocket == "Release":
            return status not in ("Current Stable Release", "Supported", "Obsolete")
        if source.pocket in ("Security", "Updates"):
            return status not in ("Active Development", "Pre-release Freeze", "Experimental")
        return True

    @staticmethod
    def _token(header: str) -> str:
        for part in header.removeprefix("OAuth ").split(","):
            key, _, value = part.strip().partition("=")
            if key == "oauth_token":
                return value.strip('"')
        return ""
