"""Bulk writes that Django's ORM does slowly: many publications' fields in one statement,
and the ids of names made on the way (source packages, say).

Only the event writer (packages.services.phasing) saves percentages and states here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

from packages.models import Publication


def uses_postgresql() -> bool:
    """Whether the faster PostgreSQL statements apply (else the portable ORM path)."""
    return connection.vendor == "postgresql"


def ids_for_names(model: type[models.Model], field_name: str, values: Iterable[str]) -> dict[str, int]:
    """name → id for every value, creating the rows that do not exist yet (races included)."""
    wanted = set(values)
    lookup = f"{field_name}__in"
    known: dict[str, int] = dict(
        model._default_manager.filter(**{lookup: wanted}).values_list(field_name, "id")
    )
    missing = wanted - known.keys()
    if missing:
        model._default_manager.bulk_create(
            [model(**{field_name: value}) for value in missing],
            ignore_conflicts=True,
            batch_size=1000,
        )
        known.update(
            model._default_manager.filter(**{lookup: missing}).values_list(field_name, "id")
        )
    return known


_DRIVER_ADAPTS = frozenset(
    {"CharField", "DateTimeField", "PositiveSmallIntegerField", "BooleanField", "ForeignKey"}
)


def publications_save(publications: Sequence[Publication], fields: Sequence[str]) -> None:
    """Save `fields` of many publications in one statement.

    Django's bulk_update builds a CASE WHEN per field and row, which costs more Python
    time than the database spends on the update; on PostgreSQL one UPDATE ... FROM
    unnest(...) does the same. Callers hold the rows locked.
    """
    if not publications:
        return
    if not uses_postgresql():
        Publication.objects.bulk_update(publications, fields, batch_size=500)
        return
    meta = Publication._meta
    # Concrete columns of this model: Any, since django-stubs types get_field() as any
    # field, relation or not, and rel_db_type is missing from its Field.
    columns: list[Any] = [meta.get_field(name) for name in fields]
    pk: Any = meta.pk
    types = [pk.rel_db_type(connection)] + [
        (c.rel_db_type(connection) if c.is_relation else c.db_type(connection)) or "text"
        for c in columns
    ]
    quote = connection.ops.quote_name
    names = [quote(c.column) for c in columns]
    # One typed array per column through unnest(): a fixed number of parameters.
    arrays = ", ".join(f"%s::{t}[]" for t in types)
    assignments = ", ".join(f"{n} = v.{n}" for n in names)
    sql = (
        f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "
        f"FROM unnest({arrays}) AS v({quote(pk.column)}, {', '.join(names)}) "
        f"WHERE t.{quote(pk.column)} = v.{quote(pk.column)}"
    )
    params = [[p.pk for p in publications]] + [
        [getattr(p, c.attname) for p in publications]
        if c.get_internal_type() in _DRIVER_ADAPTS
        else [c.get_db_prep_save(getattr(p, c.attname), connection) for p in publications]
        for c in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
