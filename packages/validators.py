"""Django validators over packages.domain.inputs, for model fields and forms (the admin's too)."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from packages.domain import inputs


def validate_source_name(value: str) -> None:
    problem = inputs.source_name_problem(value)
    if problem:
        raise ValidationError(f"The package name {problem}.", code="source_name")


def validate_version(value: str) -> None:
    problem = inputs.version_problem(value, blank=True)
    if problem:
        raise ValidationError(f"The version {problem}.", code="version")
