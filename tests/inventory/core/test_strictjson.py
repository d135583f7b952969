"""``strictjson.duplicate_key``: the one check of a key named twice, for every body another
decoder reads (msgspec and orjson keep the last copy silently). Its fast count must never
answer "unique" for a body that repeats a key, and the key named must be the one ``json.loads``
with its pairs hook names, on every JSON text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inventory.core import strictjson

# Keys chosen to meet each other often, and to hold what a byte count could be fooled by: a
# quote, a backslash, a brace, a colon, a non-ASCII letter (escaped or not).
KEYS = st.sampled_from(["a", "b", "ts", 'q"', "\\", "{", "x:y", '":', "é", " "])
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | KEYS
)
TREES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4).map(lambda items: ("list", items))
        | st.lists(st.tuples(KEYS, children), max_size=5).map(lambda pairs: ("object", pairs))
    ),
    max_leaves=25,
)


def render(tree, *, ascii_only: bool, colon: str) -> str:
    """JSON text of ``tree`` with objects written pair by pair, so keys may repeat."""
    if isinstance(tree, tuple) and tree[0] == "list":
        return "[" + ",".join(render(t, ascii_only=ascii_only, colon=colon) for t in tree[1]) + "]"
    if isinstance(tree, tuple) and tree[0] == "object":
        pairs = (
            json.dumps(k, ensure_ascii=ascii_only) + colon + render(v, ascii_only=ascii_only, colon=colon)
            for k, v in tree[1]
        )
        return "{" + ",".join(pairs) + "}"
    return json.dumps(tree, ensure_ascii=ascii_only)


def expected_duplicate(body: bytes) -> str | None:
    try:
        json.loads(body, object_pairs_hook=strictjson.no_duplicates)
    except strictjson.DuplicateKeyError as exc:
        return exc.key
    return None


@given(TREES, st.booleans(), st.sampled_from([":", ": ", " :", "\n:"]))
def test_the_fast_count_agrees_with_json_loads_on_any_json(tree, ascii_only, colon):
    body = render(tree, ascii_only=ascii_only, colon=colon).encode()
    expected = expected_duplicate(body)
    if expected is not None:
        assert not strictjson._unique_by_count(body), body  # never "unique" for a repeat
    assert strictjson.duplicate_key(body) == expected


@given(st.lists(TREES, min_size=1, max_size=6), st.booleans())
def test_ndjson_lines_are_checked_line_by_line(trees, ascii_only):
    lines = [render(t, ascii_only=ascii_only, colon=":").encode() for t in trees]
    expected = next(
        ((i, key) for i, line in enumerate(lines) if (key := expected_duplicate(line)) is not None), None
    )
    assert strictjson.duplicate_key_in_lines(lines, each_is_json=True) == expected
    assert strictjson.duplicate_key_in_lines(lines, each_is_json=False) == expected


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"samples":[{"device":"d","port":"p","ts":1,"ts":2}]}', "ts"),
        (b'{"samples":[],"samples":[{"device":"d"}]}', "samples"),
        # the same key, once escaped: equal once decoded
        (b'{"samples":[{"device":"d","\\u0064evice":"e"}]}', "device"),
        # in an object a sample's field holds, and in a field cabletrack ignores
        (b'{"samples":[{"module_thresholds":{"temperature_high_alarm":70,"temperature_high_alarm":90}}]}',
         "temperature_high_alarm"),
        (b'{"samples":[{"device":"d","vendor_extra":{"x":[{"k":1,"k":2}]}}]}', "k"),
        # white space before a colon; a brace and an escaped quote inside strings
        (b'{"samples":[{"device" : "d", "device" : "e"}]}', "device"),
        (b'{"samples":[{"device":"{","port":"\\"","port":"p"}]}', "port"),
        (b'{"samples":[{"device":"d","port":"p"},{"device":"d","port":"p"}]}', None),
        (b'{"samples":[{"device":"d:p","port":"a\\"b"}]}', None),
        (b"not json", None),  # the body's own decoder refuses it, in its own words
    ],
)  # fmt: skip
def test_a_repeated_key_is_named_wherever_it_is(body, key):
    assert strictjson.duplicate_key(body) == key


def test_the_refusal_names_the_key_and_says_nothing_was_stored():
    assert strictjson.duplicate_message("ts") == (
        "Duplicate key 'ts' in a JSON object: send each key once; nothing was stored."
    )
