"""Every endpoint answers 400 to a query parameter it does not declare, naming it and the
ones it takes: a misspelt filter (`?package=`, `?limit=`) must not silently do nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase

from overview.pages.errors import api_error

Run = Callable[..., HttpResponseBase]


def declared_query_parameters(operation: Any) -> frozenset[str]:
    """The query parameters an operation declares (a Query[Schema]'s fields one by one)."""
    names: set[str] = set()
    for model in operation.models:
        if getattr(model, "__ninja_param_source__", None) == "query":
            names.update(getattr(model, "__ninja_flatten_map__", None) or model.model_fields)
    return frozenset(names)


def unknown_parameters_words(unknown: list[str], allowed: frozenset[str]) -> str:
    names = ", ".join(sorted(unknown))
    noun = "parameter" if len(unknown) == 1 else "parameters"
    takes = ", ".join(sorted(allowed)) if allowed else "no query parameters"
    return f"unknown query {noun}: {names}; this endpoint takes {takes}"


def refuse_unknown_parameters(run: Run) -> Run:
    """A view-mode decorator (NinjaAPI.add_decorator(..., mode="view")): it wraps an
    operation's bound `run`, so it reads the operation's declarations once, up front."""
    operation = getattr(run, "__self__", None)
    if operation is None:  # not a bound Operation.run: nothing declared to check against
        return run
    allowed = declared_query_parameters(operation)

    def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        unknown = [name for name in request.GET if name not in allowed]
        if unknown:
            return api_error(400, unknown_parameters_words(unknown, allowed))
        return run(request, *args, **kwargs)

    return checked
