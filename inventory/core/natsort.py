"""Natural order for the names people read: Front 1, Front 2, ..., Front 10; eth2 before eth10.

A one-line key rather than the ``natsort`` package: names here are short ASCII identifiers
(ports, cages, racks, devices), and a regular expression covers them whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str | None) -> tuple:
    """Sort key: digit runs compare as numbers, the text between them case-insensitively.

    ``re.split`` with a capturing group alternates text and digits (text first, maybe empty),
    so two keys always compare text with text and numbers with numbers.
    """
    parts = _DIGITS.split(name or "")
    return tuple(int(p) if i % 2 else p.casefold() for i, p in enumerate(parts))


def natural_sorted(names: Iterable, key=None) -> list:
    """``sorted`` in natural order; ``key`` picks the name out of each item."""
    pick = key or (lambda x: x)
    return sorted(names, key=lambda item: natural_key(pick(item)))
