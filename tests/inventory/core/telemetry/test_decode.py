"""The batch decoder: per-item errors with indexes, never a crash, valid items kept."""

import json
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inventory.core.telemetry.decode import BOM, BodyError, decode_json, decode_ndjson

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
LIMITS = dict(now=NOW, max_future=timedelta(minutes=5), max_samples=10_000)

good_sample = st.fixed_dictionaries(
    {
        # text without control characters: an item carrying NUL (PostgreSQL cannot store it) or
        # CR, LF, ... (they reach mail subjects and log lines) is refused
        "device": st.text(
            st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=20
        ),
        "port": st.text(st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=20),
        "ts": st.datetimes(
            min_value=datetime(2020, 1, 1), max_value=datetime(2026, 11, 29), timezones=st.just(UTC)
        ).map(lambda d: d.isoformat()),
    },
    optional={
        "fec_corrected_codewords": st.integers(0, (1 << 64) - 1),
        "fec_uncorrectable_codewords": st.integers(0, (1 << 64) - 1),
        "rx_power_dbm": st.one_of(
            st.floats(-40, 10), st.lists(st.one_of(st.none(), st.floats(-40, 10)), max_size=8)
        ),
        "fec_hist": st.lists(st.integers(0, (1 << 63) - 1), max_size=16),
        "pre_fec_ber": st.floats(0, 1),
        "module_serial": st.text(
            # control characters (NUL, CR, LF, ...) are refused per item: a good serial has none
            st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp")),
            max_size=30,
        ),
    },
).filter(lambda d: len(d) > 3)  # a sample with a reading (device, port and ts alone: no_data)
junk = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=10),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(
        st.sampled_from(["device", "port", "ts", "fec_hist", "rx_bits"]),
        st.one_of(st.integers(), st.text(max_size=5), st.none()),
        max_size=4,
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), good_sample, junk), max_size=30))
def test_every_item_is_either_kept_or_reported_with_its_index(items):
    """Property: for any mix of good samples and junk, each index is accounted for exactly once,
    every good sample is kept, and the decoder never raises."""
    batch = [g if ok else j for ok, g, j in items]
    out = decode_json(json.dumps({"samples": batch}).encode(), **LIMITS)
    kept = set(out.index)
    errors = {e.index for e in out.errors}
    assert kept.isdisjoint(errors)
    assert kept | errors == set(range(len(batch)))
    for i, (ok, _, _) in enumerate(items):
        if ok:
            assert i in kept
    assert out.received == len(batch)
    for s in out.samples:
        assert s.ts.tzinfo is UTC


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(body):
    try:
        out = decode_json(body, **LIMITS)
    except BodyError:
        return
    assert len(out.samples) + len(out.errors) == out.received


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(
            good_sample.map(lambda d: json.dumps(d).encode()),
            # not blank, nor blank but for a byte-order mark (dropped when it leads the body)
            st.binary(max_size=30).filter(lambda b: b"\n" not in b and b.removeprefix(BOM).strip()),
        ),
        max_size=20,
    )
)
def test_ndjson_lines_are_items(lines):
    out = decode_ndjson(b"\n".join(lines), **LIMITS)
    assert len(out.samples) + len(out.errors) == out.received == len(lines)


def test_future_and_naive_timestamps_and_u64_bounds():
    body = json.dumps(
        {
            "samples": [
                {"device": "d", "port": "p", "ts": (NOW + timedelta(minutes=10)).isoformat()},
                {"device": "d", "port": "p", "ts": "2026-11-29T11:00:00"},
                {"device": "d", "port": "p", "ts": NOW.isoformat(), "rx_bits": 1 << 64},
                {
                    "device": "d",
                    "port": "p",
                    "ts": (NOW + timedelta(minutes=1)).isoformat(),
                    "rx_bits": (1 << 64) - 1,
                },
            ]
        }
    ).encode()
    out = decode_json(body, **LIMITS)
    errors = sorted(out.errors, key=lambda e: e.index)
    assert [(e.index, e.code) for e in errors] == [(0, "future_ts"), (1, "invalid"), (2, "invalid")]
    assert "timezone" in errors[1].message
    assert out.index == [3]


@pytest.mark.parametrize("body", [b"", b"[]", b'{"samples": {}}', b"\xff\xfe", b'{"samples": [1]'])
def test_body_errors(body):
    with pytest.raises(BodyError):
        decode_json(body, **LIMITS)


def test_too_many_samples():
    body = orjson.dumps({"samples": [{"device": "d", "port": "p", "ts": NOW.isoformat()}] * 3})
    with pytest.raises(BodyError, match="Too many"):
        decode_json(body, now=NOW, max_future=timedelta(0), max_samples=2)


def test_no_data_items_are_refused_whether_or_not_a_column_is_full():
    """Every item with a counter: one full column proves it; a mixed batch is looked at item by
    item, and only the item with no reading is refused."""
    ts = NOW.isoformat()
    full = [{"device": "d", "port": f"p{i}", "ts": ts, "link_down_events": i} for i in range(3)]
    assert not decode_json(orjson.dumps({"samples": full}), **LIMITS).errors
    mixed = [
        {"device": "d", "port": "a", "ts": ts, "link_down_events": 0},
        {"device": "d", "port": "b", "ts": ts, "module_serial": "X1"},
        {"device": "d", "port": "c", "ts": ts, "unknown_counter": 7},
    ]
    out = decode_json(orjson.dumps({"samples": mixed}), **LIMITS)
    assert out.index == [0, 1]
    assert [(e.index, e.code) for e in out.errors] == [(2, "no_data")]
