"""Bulk writes that Django's ORM does slowly: many publications' fields in one statement,
and the ids of names made on the way (source packages, say).

Only the event writer (packages.services.phasing) saves percentages and states here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, models

from packages.lookups import array_text
from packages.models import Publication


def uses_postgresql() -> bool:
    """Whether the faster PostgreSQL statements apply (else the portable ORM path)."""
    return connection.vendor == "postgresql"


def ids_for_names(
    model: type[models.Model], field_name: str, values: Iterable[str]
) -> dict[str, int]:
    """name → id for every value, creating the rows that do not exist yet (races included)."""
    wanted = set(values)
    lookup = f"{field_name}__any"
    known: dict[str, int] = dict(
        model._default_manager.filter(**{lookup: wanted}).values_list(field_name, "id")
    )
    missing = wanted - known.keys()
    if missing:
        model._default_manager.bulk_create(
            # Sorted: two callers creating the same rows wait for each other one way only.
            [model(**{field_name: value}) for value in sorted(missing)],
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
        _publications_save_each(publications, fields)
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
    params = [array_text([p.pk for p in publications])] + [
        _column(c, publications) for c in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _publications_save_each(publications: Sequence[Publication], fields: Sequence[str]) -> None:
    """The portable path: one prepared UPDATE run for every row. Django's bulk_update
    builds a CASE per field and row, which on a tick of hundreds of rows cost more than
    the database's own work."""
    meta = Publication._meta
    columns: list[Any] = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(c.column)} = %s" for c in columns)
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(meta.pk.column)} = %s"
    rows = [
        [c.get_db_prep_save(getattr(p, c.attname), connection) for c in columns] + [p.pk]
        for p in publications
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def rows_upsert(
    model: type[models.Model],
    rows: Sequence[models.Model],
    *,
    unique_fields: Sequence[str],
    update_fields: Sequence[str],
    compared_fields: Sequence[str] = (),
) -> None:
    """Insert rows, replacing `update_fields` of those that exist, in one statement.

    With `compared_fields`, an existing row is rewritten only when one of those differs
    from what is stored (the database compares, in the same statement): a row found the
    same costs no write, and keeps the rest of its fields.

    On PostgreSQL one INSERT ... SELECT FROM unnest(...) ON CONFLICT, with one array per
    column: a fixed number of parameters however many rows (bulk_create would need a
    parameter per value, and batches past the driver's limit). On SQLite the same upsert,
    prepared once and run for every row.
    """
    if not rows:
        return
    meta = model._meta
    fields: list[Any] = [f for f in meta.concrete_fields if not (f.primary_key and f.auto_created)]
    quote = connection.ops.quote_name
    names = [quote(f.column) for f in fields]
    types = [
        (f.rel_db_type(connection) if f.is_relation else f.db_type(connection)) or "text"
        for f in fields
    ]
    column = {f.name: quote(f.column) for f in fields}
    conflict = ", ".join(column[name] for name in unique_fields)
    updates = ", ".join(f"{column[name]} = EXCLUDED.{column[name]}" for name in update_fields)
    upsert = f"ON CONFLICT ({conflict}) DO UPDATE SET {updates}"
    if compared_fields:
        # NULL-safe inequality: IS DISTINCT FROM on PostgreSQL, IS NOT on SQLite.
        differs = "IS DISTINCT FROM" if uses_postgresql() else "IS NOT"
        table = quote(meta.db_table)
        upsert += " WHERE " + " OR ".join(
            f"{table}.{column[name]} {differs} EXCLUDED.{column[name]}" for name in compared_fields
        )
    with connection.cursor() as cursor:
        if not uses_postgresql():
            values = [
                [f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]
                for row in rows
            ]
            # SQLite reads the same upsert; one prepared statement run for every row.
            placeholders = ", ".join(["%s"] * len(fields))
            cursor.executemany(
                f"INSERT INTO {quote(meta.db_table)} ({', '.join(names)}) "
                f"VALUES ({placeholders}) {upsert}",
                values,
            )
            return
        arrays = ", ".join(f"%s::{t}[]" for t in types)
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(names)}) "
            f"SELECT * FROM unnest({arrays}) {upsert}",
            [_column(f, rows) for f in fields],
        )


# Values the driver adapts as they are (Django's preparation returns them unchanged on
# PostgreSQL): preparing each one cost a tick of 20,000 assessments seconds.
_AS_THEY_ARE = _DRIVER_ADAPTS | {
    "OneToOneField",
    "TextField",
    "IntegerField",
    "PositiveIntegerField",
    "BigIntegerField",
    "SmallIntegerField",
}


def _column(field: Any, rows: Sequence[models.Model]) -> Any:
    """One column of the rows, as PostgreSQL's unnest() reads it: as the array's text
    where packages.lookups.array_text can write it (psycopg adapts a list element by
    element in Python, half a second for the 20,000 assessments of a tick)."""
    name = field.attname
    kind = field.get_internal_type()
    if kind in _AS_THEY_ARE:
        values = [getattr(row, name) for row in rows]
    elif kind == "FloatField":  # an int in a float column would make the array's type int
        values = [None if (v := getattr(row, name)) is None else float(v) for row in rows]
    else:
        values = [field.get_db_prep_save(getattr(row, name), connection) for row in rows]
    return array_text(values)
