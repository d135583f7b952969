"""JSON read strictly: an object that names a key twice is refused, not silently reduced to its
last value (which parser keeps which copy differs between tools, so two readers of one body could
disagree about what it says). Nesting too deep for the parser is refused too, never a crash."""

from __future__ import annotations

import json
from typing import Any


class StrictJSONError(ValueError):
    """The body is not JSON this product accepts; the message says why, in words."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise StrictJSONError(f"Duplicate key {dup!r} in a JSON object.")
    return obj


def loads(data: str | bytes) -> Any:
    """``json.loads``, refusing duplicate keys and nesting past the interpreter's recursion limit."""
    try:
        return json.loads(data, object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise StrictJSONError("The JSON is nested too deeply.") from None
    except StrictJSONError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise StrictJSONError(f"Malformed JSON: {exc}") from None
