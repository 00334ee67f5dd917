"""Driving admin actions the way a browser does: choose, then apply with a reason."""

from __future__ import annotations

from django.urls import reverse

CHANGELIST = "admin:packages_publication_changelist"


def apply_action(client, action: str, objects, url_name: str = CHANGELIST, **data):
    """The second POST, from the reason page."""
    return client.post(
        reverse(url_name),
        {"action": action, "apply": "1", "_selected_action": [o.pk for o in objects], **data},
        follow=True,
    )
