"""Validators shared by services, forms and the API."""

import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.utils.deconstruct import deconstructible

from inventory.core.names import NAME_PATTERN, NAME_RULE, name_problem

LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")
LABEL_RULE = "1-64 characters: letters, digits and . _ : + - (no spaces or slashes)."


@deconstructible
class NameValidator(RegexValidator):
    """Model-field validator for site, room, row, rack and device names (``core.names``): the
    pattern for the OpenAPI schema, the message from ``name_problem`` (it says what is wrong)."""

    regex = NAME_PATTERN
    message = NAME_RULE
    code = "invalid_name"

    def __call__(self, value) -> None:
        problem = name_problem(value)
        if problem:
            raise ValidationError(problem, code=self.code)


validate_name = NameValidator()
