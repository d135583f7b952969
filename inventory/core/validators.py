"""Validators shared by services, forms and the API."""

import re

from django.core.exceptions import ValidationError

from inventory.core.names import name_problem

LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")
LABEL_RULE = "1-64 characters: letters, digits and . _ : + - (no spaces or slashes)."


def validate_name(value: str) -> None:
    """Model-field validator for site, room, row, rack and device names (``core.names``)."""
    problem = name_problem(value)
    if problem:
        raise ValidationError(problem, code="invalid_name")
