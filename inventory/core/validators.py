"""Validators shared by services, forms and the API."""

import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.utils.deconstruct import deconstructible

from inventory.core.choices import ConnectorType
from inventory.core.names import NAME_PATTERN, NAME_RULE, name_problem


def is_whole_number(text: str) -> bool:
    """``text`` is written in the digits 0-9 and nothing else. ``str.isdigit`` also takes "²"
    (which ``int`` refuses: ``?days=²`` was a 500) and other scripts' digits; every parameter,
    id or count read from a request asks this instead."""
    return text.isascii() and text.isdigit()


LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,63}$")
LABEL_RULE = "1-64 characters: letters, digits and . _ : + - (no spaces or slashes)."

# The fibre counts MPO plugs are made in (8, 12 and 16 on modules and jumpers; 24 and 32 on
# trunks and MPO-32 modules): any other count is a typing error the test gate would believe.
MPO_COUNTS = (8, 12, 16, 24, 32)
MPO_FIBRE_COUNTS = "8, 12, 16, 24 or 32"


def same_port_problem(port: str) -> str:
    """What a new cable with two ends on one port (``leaf-1:Ethernet2/1``) is told, once, at the
    end that repeats it: the plan import, ``POST /api/cables/`` and the desk's new-cable form all
    say it with this one function (and say nothing else of that port: not "already cabled")."""
    return f"Both ends are the same port ({port})."


def end_fibre_count_problem(
    *, connector_type: str, fibre_count: int | None, breakout_leg: bool = False
) -> str | None:
    """Why a new cable end's connector and fibre count will not do together, or None.

    An MPO end says how many fibres it has: the test gate asks for a result on every fibre in
    use (``fibres_in_use``), and without the count it asked for one fibre of a 12-fibre jumper.
    A breakout's legs are exempt: each carries a share of the one end on the other side, and
    that end's count is the cable's (the gate reads the largest count of its ends). A count MPO
    plugs are not made in (10) is refused too: the gate would ask for 10 fibres. The plan
    import, ``POST /api/cables/`` and the desk's new-cable form all ask this one function."""
    if connector_type != ConnectorType.MPO:
        return None
    if not fibre_count:
        return None if breakout_leg else f"MPO needs a fibre count: {MPO_FIBRE_COUNTS}."
    if fibre_count not in MPO_COUNTS:
        return f"An MPO plug has {MPO_FIBRE_COUNTS} fibres, not {fibre_count}."
    return None


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
