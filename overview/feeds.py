"""Atom feeds of halted updates and of every phasing change, each filterable by release."""

from __future__ import annotations

from datetime import datetime

from django.contrib.syndication.views import Feed
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.utils.http import urlencode

from overview import selectors
from overview.wording import verdict_label
from packages.models import EventKind, PhasingEvent, Release


class _PhasingEventsFeed(Feed):
    feed_type = Atom1Feed
    kinds: tuple[str, ...] = ()
    what = "Phasing changes"
    url_name = "overview:feed-changes"

    def get_object(self, request: HttpRequest) -> Release | None:
        codename = request.GET.get("release")
        if not codename:
            return None
        return get_object_or_404(Release, codename=codename)

    def title(self, release: Release | None) -> str:
        return f"{self.what} of {release.codename}" if release else f"{self.what}: all releases"

    def subtitle(self, release: Release | None) -> str:
        return "Phased-update percentages of stable release updates, as the controller sets them."

    def link(self, release: Release | None) -> str:
        url = reverse("overview:index")
        return f"{url}?{urlencode({'release': release.codename})}" if release else url

    def feed_url(self, release: Release | None) -> str:
        url = reverse(self.url_name)
        return f"{url}?{urlencode({'release': release.codename})}" if release else url

    def items(self, release: Release | None) -> list[PhasingEvent]:
        return selectors.phasing_events(release=release, kinds=self.kinds)

    def item_title(self, event: PhasingEvent) -> str:
        publication = event.publication
        return (
            f"{publication.source_package.name} {publication.version} "
            f"({publication.release.codename}): {event.get_kind_display().lower()}, "
            f"{event.percentage_change}"
        )

    def item_description(self, event: PhasingEvent) -> str:
        state = event.get_new_state_display()
        by = f" by {event.actor_name}" if event.actor_name else ""
        reason = f": {event.reason}" if event.reason else ""
        said = f"{state}{by}{reason}"
        assessment = getattr(event.publication, "assessment", None)
        if assessment is None:
            return said
        return f"{said}. Verdict now: {verdict_label(assessment).lower()}, {assessment.evidence}."

    def item_link(self, event: PhasingEvent) -> str:
        publication = event.publication
        query = urlencode({"release": publication.release.codename})
        return f"{publication.source_package.get_absolute_url()}?{query}#event-{event.pk}"

    def item_pubdate(self, event: PhasingEvent) -> datetime:
        return event.created_at

    def item_updateddate(self, event: PhasingEvent) -> datetime:
        return event.created_at

    def item_author_name(self, event: PhasingEvent) -> str:
        return event.actor_name


class HaltsFeed(_PhasingEventsFeed):
    kinds = (EventKind.HALTED,)
    what = "Halted updates"
    url_name = "overview:feed-halts"


class ChangesFeed(_PhasingEventsFeed):
    what = "Phasing changes"
    url_name = "overview:feed-changes"
