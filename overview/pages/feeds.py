"""Atom feeds of halted updates and of every phasing change, each filterable by release
and by source package, and the page that explains them with their subscribe links."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import get_script_prefix, reverse
from django.utils.feedgenerator import Atom1Feed
from django.utils.http import urlencode

from overview.pages import selectors
from overview.pages.selectors import ReleaseNote
from overview.pages.wording import verdict_label
from packages.domain import inputs
from packages.models import EventKind, PhasingEvent, Release, SourcePackage

Item = PhasingEvent | ReleaseNote


class PlainTextAtomFeed(Atom1Feed):
    """Atom whose summaries are `type="text"`: reasons are written by people and function
    names come from crash sources, so a feed reader must show them, never render them."""

    def add_item_elements(self, handler, item):
        summary = item.get("description")
        super().add_item_elements(handler, {**item, "description": None})
        if summary is not None:
            handler.addQuickElement("summary", summary, {"type": "text"})


@dataclass(frozen=True)
class FeedScope:
    """What a feed is about: a release, a source package, both or neither."""

    release: Release | None = None
    package: SourcePackage | None = None

    def query(self) -> str:
        pairs = {}
        if self.release is not None:
            pairs["release"] = self.release.codename
        if self.package is not None:
            pairs["package"] = self.package.name
        return f"?{urlencode(pairs)}" if pairs else ""

    def words(self) -> str:
        parts = []
        if self.package is not None:
            parts.append(self.package.name)
        if self.release is not None:
            parts.append(f"in {self.release.codename}")
        return " ".join(parts) if parts else "all releases"


class _PhasingEventsFeed(Feed):
    feed_type = PlainTextAtomFeed
    kinds: tuple[str, ...] = ()
    what = "Phasing changes"
    url_name = "overview:feed-changes"

    def get_object(self, request: HttpRequest) -> FeedScope:
        # A name no package can have is a 404, like a package we do not know: never a 500.
        codename = request.GET.get("release")
        name = request.GET.get("package")
        release = package = None
        if codename:
            if inputs.codename_problem(codename):
                raise Http404("no such release")
            release = get_object_or_404(Release, codename=codename)
        if name:
            if inputs.source_name_problem(name):
                raise Http404("no such source package")
            package = get_object_or_404(SourcePackage, name=name)
        return FeedScope(release, package)

    def title(self, scope: FeedScope) -> str:
        return f"{self.what}: {scope.words()}"

    def subtitle(self, scope: FeedScope) -> str:
        return "Phased-update percentages of stable release updates, as the controller sets them."

    def link(self, scope: FeedScope) -> str:
        if scope.package is not None:
            return scope.package.get_absolute_url() + (
                f"?{urlencode({'release': scope.release.codename})}" if scope.release else ""
            )
        return reverse("overview:index") + FeedScope(scope.release).query()

    def feed_url(self, scope: FeedScope) -> str:
        return reverse(self.url_name) + scope.query()

    def items(self, scope: FeedScope) -> list[Item]:
        return selectors.phasing_events(
            release=scope.release, package=scope.package, kinds=self.kinds
        )

    def item_title(self, item: Item) -> str:
        if isinstance(item, ReleaseNote):
            plural = "s" if item.count != 1 else ""
            return (
                f"{item.codename}: {item.get_kind_display().lower()}, "
                f"{item.count} update{plural} in phasing"
            )
        publication = item.publication
        return (
            f"{publication.source_package.name} {publication.version} "
            f"({publication.release.codename}): {item.get_kind_display().lower()}, "
            f"{item.percentage_change}"
        )

    def item_description(self, item: Item) -> str:
        by = f" by {item.actor_name}" if item.actor_name else ""
        reason = f": {item.reason}" if item.reason else ""
        if isinstance(item, ReleaseNote):
            return f"{item.get_kind_display()}{by}{reason}"
        said = f"{item.get_new_state_display()}{by}{reason}"
        assessment = getattr(item.publication, "assessment", None)
        if assessment is None:
            return said
        return f"{said}. Verdict now: {verdict_label(assessment).lower()}, {assessment.evidence}."

    def item_link(self, item: Item) -> str:
        if isinstance(item, ReleaseNote):
            return f"{reverse('overview:index')}?{urlencode({'release': item.codename})}"
        publication = item.publication
        query = urlencode({"release": publication.release.codename})
        return f"{publication.source_package.get_absolute_url()}?{query}#event-{item.pk}"

    def item_guid(self, item: Item) -> str:
        # Atom ids are absolute IRIs (RFC 4287 4.2.6), the same whichever host name a
        # reader used: on the configured site, as the links in emails.
        if isinstance(item, ReleaseNote):
            return _on_site(f"{self.item_link(item)}#note-{item.first_id}")
        return _on_site(self.item_link(item))

    def item_pubdate(self, item: Item) -> datetime:
        return item.created_at

    def item_updateddate(self, item: Item) -> datetime:
        return item.created_at

    def item_author_name(self, item: Item) -> str:
        return item.actor_name


def _on_site(path: str) -> str:
    """`path` (from reverse()) on PHASING_SITE_URL, whose own path replaces the script prefix."""
    prefix = get_script_prefix()
    if path.startswith(prefix):
        path = path[len(prefix) :]
    return settings.PHASING_SITE_URL.rstrip("/") + "/" + path.lstrip("/")


class HaltsFeed(_PhasingEventsFeed):
    kinds = (EventKind.HALTED,)
    what = "Halted updates"
    url_name = "overview:feed-halts"


class ChangesFeed(_PhasingEventsFeed):
    what = "Phasing changes"
    url_name = "overview:feed-changes"


def feeds_page(request: HttpRequest) -> HttpResponse:
    """What each feed holds and how to subscribe, for every release (one query)."""
    releases = Release.objects.order_by("-version").values_list("codename", flat=True)
    return render(request, "overview/feeds.html", {"releases": list(releases)})
