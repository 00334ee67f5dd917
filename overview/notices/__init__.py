"""Notices to the places where teams talk: signed webhooks and chat rooms.

Events reach here through packages.services.announcements (a listener registered when
the app is ready), never by `packages` importing this. May import overview.models and
packages; nothing below the pages imports it.
"""
