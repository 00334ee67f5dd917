"""Model instances read from the database without Model.__init__'s work for each field.

A tick at 20,000 updates in phasing makes tens of thousands of instances from rows (its
publications, their problems and buckets), and Model.__init__ cost more of it than any
decision: for each field it looks up the descriptor to set the value through, and it
sends pre_init and post_init. An instance read from the database needs none of that: its
values are the row's, stored where Model.__init__ would store them (the instance's
__dict__, under each field's attname), and a field the query deferred is left out, so it
is read when first asked for, as Django does. Model.from_db is Django's documented place
for this.

Only when nothing listens to pre_init or post_init (a library that does, django-model-
utils' field trackers say, gets Django's own path, and the instance it expects).
"""

from __future__ import annotations

from collections.abc import Collection
from functools import cache
from typing import Any, Self, TypeVar

from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init


class LoadedFromRows:
    """Mixin for a model read in bulk: from_db fills the instance straight from the row."""

    @classmethod
    def from_db(cls, db: str | None, field_names: Collection[str], values: Collection[Any]) -> Self:
        if pre_init.receivers or post_init.receivers:
            return super().from_db(db, field_names, values)  # type: ignore[misc]
        new = cls.__new__(cls)
        state = new._state = ModelState()  # type: ignore[attr-defined]
        state.adding = False
        state.db = db
        new.__dict__.update(zip(field_names, values, strict=True))
        return new


M = TypeVar("M", bound=Model)


@cache
def _attnames(model: type[Model]) -> frozenset[str]:
    return frozenset(field.attname for field in model._meta.concrete_fields)


def built(model: type[M], **values: Any) -> M:
    """A new instance of `model` for a bulk write, from its fields' attnames: what
    Model.__init__ would store (each value in the instance's __dict__, a field not given at
    its default), without its walk over the fields (a tick builds 20,000 assessments).
    Django's own __init__ when anything listens to pre_init or post_init."""
    if pre_init.receivers or post_init.receivers:
        return model(**values)
    unknown = values.keys() - _attnames(model)
    if unknown:  # as Model.__init__ refuses them: a misspelt field is not silently dropped
        raise TypeError(f"{model.__name__}() got unexpected keywords: {', '.join(sorted(unknown))}")
    new = model.__new__(model)
    new._state = ModelState()
    new.__dict__.update(
        {
            field.attname: field.get_default()
            for field in model._meta.concrete_fields
            if field.attname not in values
        }
    )
    new.__dict__.update(values)
    return new
