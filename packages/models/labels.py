"""Choice labels without Django's cost per call: `get_FOO_display()` rebuilds its field's
choices as a dict each time it is called, and a history page asks it hundreds of times."""

from __future__ import annotations

import functools

from django.db import models


@functools.cache
def _labels(model: type[models.Model], name: str) -> dict[object, str]:
    field = model._meta.get_field(name)
    return {value: str(label) for value, label in field.flatchoices}  # type: ignore[union-attr]


def label_of(instance: models.Model, name: str) -> str:
    """What `instance.get_<name>_display()` says: the label of the field's value, or the
    value itself when it is not one of the choices."""
    value = getattr(instance, name)
    return _labels(type(instance), name).get(value, value)
