"""JSON read strictly: an object that names a key twice is refused, not silently reduced to its
last value (which parser keeps which copy differs between tools, so two readers of one body could
disagree about what it says). Nesting too deep for the parser is refused too, never a crash.

Two entry points, one rule:

* ``loads``: the API's bodies (DRF parser, plan imports): ``json.loads`` with a hook that sees
  every object's pairs.
* ``duplicate_key``: for bodies another decoder reads (msgspec and orjson keep the last copy
  silently): the telemetry and collectives ingest, the native collector outputs, job
  registrations. It answers the key an object names twice, exactly, at a fraction of
  ``json.loads``'s cost on a 5,000-sample batch (figures in docs/integrator/telemetry.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec


class StrictJSONError(ValueError):
    """The body is not JSON this product accepts; the message says why, in words."""


class DuplicateKeyError(StrictJSONError):
    """An object names ``key`` twice."""

    def __init__(self, key: str):
        self.key = key
        super().__init__(duplicate_message(key))


def duplicate_message(key: str, where: str = "") -> str:
    """The one refusal of a repeated key, for every body that is JSON (``where``: " (item 3)")."""
    return f"Duplicate key {key!r} in a JSON object{where}: send each key once; nothing was stored."


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for ``json``: the object, or ``DuplicateKeyError``."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise DuplicateKeyError(dup)
    return obj


def loads(data: str | bytes) -> Any:
    """``json.loads``, refusing duplicate keys and nesting past the interpreter's recursion limit."""
    try:
        return json.loads(data, object_pairs_hook=no_duplicates)
    except RecursionError:
        raise StrictJSONError("The JSON is nested too deeply.") from None
    except StrictJSONError:
        raise
    except (ValueError, UnicodeDecodeError) as exc:
        raise StrictJSONError(f"Malformed JSON: {exc}") from None


# A key followed by white space before its colon ("a" : 1): legal, rare, left to the exact path.
_SPACE_BEFORE_COLON = re.compile(rb'"[ \t\r\n]+:')


def _flat_keys(values) -> int:
    """Distinct keys of the objects among ``values`` (a list's items), at C speed."""
    return sum(map(len, [v for v in values if type(v) is dict]))


def _shallow_keys(doc: Any) -> int:
    """Distinct keys of the top object, of its objects and of the items of its lists: the whole
    body when a batch's items hold no object (``{"samples": [...]}``, NDJSON lines, a job)."""
    if type(doc) is list:
        return _flat_keys(doc)
    if type(doc) is not dict:
        return 0
    keys = len(doc)
    for v in doc.values():
        if type(v) is list:
            keys += _flat_keys(v)
        elif type(v) is dict:
            keys += len(v)
    return keys


def _inner_keys(doc: Any) -> int:
    """Distinct keys of the objects the items' own values are (one level further down: a
    sample's ``module_thresholds`` and ``module_flags``)."""
    if type(doc) not in (dict, list):
        return 0
    lists = [doc] if type(doc) is list else [v for v in doc.values() if type(v) is list]
    return sum(
        len(v)
        for items in lists
        for item in items
        if type(item) is dict
        for v in item.values()
        if type(v) is dict
    )


# A batch as the ingest endpoints take it (``{"samples": [...]}``, NDJSON lines as one array):
# items as objects, their values left as raw views (no float or string is built).
_BATCH_SHAPE = msgspec.json.Decoder(dict[str, list[dict[str, msgspec.Raw]]] | list[dict[str, msgspec.Raw]])


def _unique_by_count(body: bytes) -> bool:
    """True only when no object of ``body`` names a key twice; False when this count cannot
    tell (``_first_duplicate`` then reads the body).

    Unless a key is followed by white space before its colon (then False), every key as written
    ends in ``":`` at a place of its own, and an escaped quote before a colon inside a string
    only adds to the count: ``body.count(b'":')`` >= keys as written >= distinct keys of the
    decoded objects, and any objects counted here (some may be left uncounted) hold at most
    that many. So when the count equals the distinct keys counted, both are equal: no object
    repeats a key. The batch shape is counted first (items' values left raw); the decoded body
    to one level inside the items next.
    """
    if (b" " in body or b"\n" in body or b"\t" in body or b"\r" in body) and _SPACE_BEFORE_COLON.search(body):
        return False
    written = body.count(b'":')
    try:
        if _shallow_keys(_BATCH_SHAPE.decode(body)) == written:
            return True
    except msgspec.ValidationError:
        pass  # another shape
    except (msgspec.DecodeError, RecursionError):
        return False  # not JSON
    try:
        doc = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return False
    return _shallow_keys(doc) + _inner_keys(doc) == written


def _first_duplicate(body: bytes) -> str | None:
    try:
        json.loads(body, object_pairs_hook=no_duplicates)
    except DuplicateKeyError as exc:
        return exc.key
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # not JSON: the body's own decoder says why
    return None


def duplicate_key(body: bytes) -> str | None:
    """The first key that an object in the JSON text ``body`` names twice, or None (also None
    when ``body`` is not JSON at all: its own decoder refuses it in its own words). Exact: the
    fast count (``_unique_by_count``) answers only when it can be sure, and the key is always
    named by reading the body with ``json.loads``."""
    if _unique_by_count(body):
        return None
    return _first_duplicate(body)


def duplicate_key_in_lines(lines: list[bytes], *, each_is_json: bool) -> tuple[int, str] | None:
    """The first (line index, key) where a JSON text of ``lines`` (NDJSON) names a key twice.
    When every line is JSON by itself (``each_is_json``: the caller decoded them), the lines
    joined as one array are the same objects, counted in one pass."""
    if each_is_json and _unique_by_count(b"[" + b",".join(lines) + b"]"):
        return None
    for i, line in enumerate(lines):
        key = _first_duplicate(line)
        if key is not None:
            return i, key
    return None
