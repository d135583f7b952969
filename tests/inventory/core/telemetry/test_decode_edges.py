"""The decoder at its edges: the item cap exactly, each check's first refused value, the
error each refused item carries, and the values a kept item holds once decoded."""

import json
import math
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from inventory.core.telemetry.decode import BodyError, ItemError, decode_json, decode_ndjson, decode_objects
from inventory.core.telemetry.dom import MODULE_KEYS

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
LIMITS = dict(now=NOW, max_future=timedelta(minutes=5), max_samples=10_000)
TS = NOW.isoformat()


def _line(**kw) -> bytes:
    return orjson.dumps({"device": "d", "port": "p", "ts": TS, "rx_bits": 1, **kw})


def test_ndjson_at_the_cap_is_read_even_with_blank_lines_and_one_more_line_is_refused():
    two = _line(port="a") + b"\n\n  \n" + _line(port="b") + b"\n"  # 4 newlines, 2 items
    out = decode_ndjson(two, now=NOW, max_future=timedelta(0), max_samples=2)
    assert [s.port for s in out.samples] == ["a", "b"]
    assert out.received == 2
    # three items, the last without a newline: two newlines, already more than the cap
    three = b"\n".join(_line(port=p) for p in "abc")
    with pytest.raises(BodyError, match="more than 2 "):
        decode_ndjson(three, now=NOW, max_future=timedelta(0), max_samples=2)


def test_an_item_error_names_device_and_port_only_when_known():
    assert ItemError(3, "invalid", "bad", "sw1", "Eth1").as_dict() == {
        "index": 3,
        "code": "invalid",
        "message": "bad",
        "device": "sw1",
        "port": "Eth1",
    }
    assert ItemError(0, "malformed", "not JSON").as_dict() == {
        "index": 0,
        "code": "malformed",
        "message": "not JSON",
    }
    assert ItemError(1, "invalid", "x", None, "Eth2").as_dict() == {
        "index": 1,
        "code": "invalid",
        "message": "x",
        "port": "Eth2",
    }
    assert ItemError(2, "invalid", "y", "sw2").as_dict() == {
        "index": 2,
        "code": "invalid",
        "message": "y",
        "device": "sw2",
    }


def test_a_bad_ndjson_line_is_its_own_error_with_its_position_device_and_port():
    body = b"\n".join(
        [
            _line(port="a"),
            b"",  # blank: not an item, so the next line is item 1
            _line(port="b", rx_bits=-1),
            b"{not json",
            b"[1, 2]",
            b'{"device": 5, "port": "p", oops',  # refused at its first value, then not JSON at all
            _line(port="c"),
        ]
    )
    out = decode_ndjson(body, **LIMITS)
    assert [(e.index, e.code, e.device, e.port) for e in out.errors] == [
        (1, "invalid", "d", "b"),
        (2, "malformed", None, None),
        (3, "malformed", None, None),
        (4, "malformed", None, None),
    ]
    assert "rx_bits" in out.errors[0].message
    assert out.errors[1].message.startswith("line is not valid JSON")
    assert out.errors[2].message == "an item must be a JSON object"
    assert out.errors[3].message == "not valid JSON: Expected `str`, got `int` - at `$.device`"
    assert [(i, s.port) for i, s in zip(out.index, out.samples, strict=True)] == [(0, "a"), (5, "c")]


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deeply_nested_ndjson_line_is_a_malformed_item_not_a_crash(depth):
    """A line that is not an object is refused at its first bracket by the typed decode; reading
    it whole to name its device overflowed the recursion limit (a 500 before this test)."""
    deep = b"[" * depth + b"]" * depth
    in_ts = b'{"device":"d","port":"p","ts":' + deep + b"}"
    unknown = b'{"device":"d","port":"p","ts":1796000000,"extra":' + deep + b"}"  # skipped field
    out = decode_ndjson(b"\n".join([_line(port="a"), deep, in_ts, unknown]), **LIMITS)
    assert [(e.index, e.code, e.message) for e in out.errors] == [
        (1, "malformed", "item nested too deeply"),
        (2, "malformed", "item nested too deeply"),
        (3, "malformed", "line nested too deeply"),
    ]
    assert [s.port for s in out.samples] == ["a"]


OUT_OF_RANGE = "ts: out of range (RFC 3339 with a zone, or epoch seconds after 1970-01-02)"


def test_ts_is_read_as_epoch_seconds_or_a_zoned_time_and_kept_in_utc():
    """Epoch seconds from 1970-01-02 to the year 3000 inclusive; a time with any offset is the
    same instant in UTC; outside those, the item is invalid with the same words."""
    given = [
        86400,
        86399.9,
        32503680000,
        32503680000.5,
        -1,
        "2026-11-29T13:00:00+02:00",
        "0001-01-01T00:00:00+14:00",
    ]
    items = [{"device": "d", "port": "p", "ts": ts, "rx_bits": 1} for ts in given]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    assert [(i, s.ts) for i, s in zip(out.index, out.samples, strict=True)] == [
        (0, datetime(1970, 1, 2, tzinfo=UTC)),
        (5, datetime(2026, 11, 29, 11, tzinfo=UTC)),
    ]
    assert all(s.ts.tzinfo is UTC for s in out.samples)
    assert [(e.index, e.code) for e in out.errors] == [
        (1, "invalid"),
        (2, "future_ts"),  # in range, but beyond now + 5 min
        (3, "invalid"),
        (4, "invalid"),
        (6, "invalid"),
    ]
    assert {e.message for e in out.errors if e.code == "invalid"} == {OUT_OF_RANGE}
    assert out.errors[1].message == "ts 3000-01-01T00:00:00+00:00 is more than 300 s in the future"


def _errors(out) -> dict[int, tuple[str, str]]:
    return {e.index: (e.code, e.message) for e in out.errors}


def test_the_time_window_includes_both_of_its_ends():
    """Raw retention of 2 days and 5 minutes of clock skew: an item exactly at either end is
    kept, one second beyond is refused with the window's own words."""
    window = dict(now=NOW, max_future=timedelta(minutes=5), max_age=timedelta(days=2))
    oldest, latest = NOW - timedelta(days=2), NOW + timedelta(minutes=5)
    ts = [oldest, oldest - timedelta(seconds=1), latest, latest + timedelta(seconds=1)]
    items = [{"device": "d", "port": "p", "ts": t.isoformat(), "rx_bits": 1} for t in ts]
    out = decode_json(orjson.dumps({"samples": items}), max_samples=10, **window)
    assert out.index == [0, 2]
    assert _errors(out) == {
        1: (
            "too_old",
            "ts 2026-11-27T11:59:59+00:00 is older than the raw retention (2 days): it would be deleted "
            "at once and cannot change the stored rollups",
        ),
        3: ("future_ts", "ts 2026-11-29T12:05:01+00:00 is more than 300 s in the future"),
    }
    assert (out.errors[0].device, out.errors[0].port) == ("d", "p")
    # fractional days are said as such
    half = decode_json(
        orjson.dumps({"samples": items[:2]}),
        now=NOW,
        max_future=timedelta(0),
        max_age=timedelta(hours=36),
        max_samples=10,
    )
    assert "(1.5 days)" in half.errors[0].message


def test_text_fields_refuse_nul_and_control_characters_and_name_the_field():
    base = {"ts": TS, "rx_bits": 1}
    items = [
        {**base, "device": "sw\x001", "port": "p"},
        {**base, "device": "d", "port": "Eth1\r\n"},
        {**base, "device": "d", "port": "p", "module_serial": "SN\t1"},
        {**base, "device": "d", "port": "p", "neighbor_port": "x\x00"},
        {**base, "device": "d", "port": "p", "module_vendor": "Acme Optics", "neighbor_device": "leaf-01"},
    ]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    assert out.index == [4]
    assert out.samples[0].module_vendor == "Acme Optics"
    assert _errors(out) == {
        0: ("invalid", "device: text cannot contain the NUL character"),
        1: ("invalid", "port: text cannot contain control characters (CR, LF, tab, ...)"),
        2: ("invalid", "module_serial: text cannot contain control characters (CR, LF, tab, ...)"),
        3: ("invalid", "neighbor_port: text cannot contain the NUL character"),
    }


def test_counters_up_to_the_unsigned_64_bit_maximum_and_not_beyond():
    top = (1 << 64) - 1
    items = [
        {"device": "d", "port": "p", "ts": TS, "pfc_pause_duration_us": top},
        {"device": "d", "port": "q", "ts": TS, "link_error_recovery": top + 1},
        {"device": "d", "port": "r", "ts": TS, "fec_corrected_codewords": 0, "fec_symbol_errors": 7},
    ]
    out = decode_json(json.dumps({"samples": items}).encode(), **LIMITS)
    assert [
        (s.pfc_pause_duration_us, s.fec_corrected_codewords, s.fec_symbol_errors) for s in out.samples
    ] == [
        (top, None, None),
        (None, 0, 7),
    ]
    assert _errors(out) == {1: ("invalid", "link_error_recovery: above the unsigned 64-bit range")}


def test_histogram_bins_need_one_ascending_non_overlapping_range_per_count():
    def item(bins, hist=(5, 4, 3)):
        return {"device": "d", "port": "p", "ts": TS, "fec_hist": list(hist), "fec_hist_bins": bins}

    pairs = "fec_hist_bins: needs one [low, high] pair per fec_hist count"
    order = "fec_hist_bins: ranges must be ascending and not overlap"
    items = [
        item([[0, 0], [1, 5], [6, 15]]),  # kept
        item([[0, 0], [1, 1], [2, 2]]),  # one-value ranges, kept
        item([[0, 0], [1, 5]]),  # a pair short
        {"device": "d", "port": "p", "ts": TS, "rx_bits": 1, "fec_hist_bins": [[0, 0]]},  # no counts
        item([[0, 0], [0, 5], [6, 15]]),  # overlap at 0
        item([[0, 0], [1, 5], [5, 15]]),  # overlap at 5
        item([[0, 0], [6, 5], [7, 15]]),  # high below low
        item([[1, 3], [4, 8], [9, 15]]),  # may start above 0
    ]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    assert out.index == [0, 1, 7]
    assert out.samples[0].fec_hist_bins == [(0, 0), (1, 5), (6, 15)]
    assert _errors(out) == {
        2: ("invalid", pairs),
        3: ("invalid", pairs),
        4: ("invalid", order),
        5: ("invalid", order),
        6: ("invalid", order),
    }


def test_lane_values_a_single_number_is_one_lane_and_a_thousand_is_the_bound():
    b = {"device": "d", "port": "p", "ts": NOW.timestamp()}
    objs = [
        {**b, "rx_power_dbm": -3.5, "tx_power_dbm": [1.0, None, -1000.0], "bias_ma": 1000.0},
        {**b, "rx_power_dbm": [-2.0, 1000.5]},
        {**b, "tx_power_dbm": -1000.5},
        {**b, "bias_ma": [6.0, float("inf")]},
        {**b, "rx_power_dbm": float("nan")},
    ]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    s = out.samples[0]
    assert (s.rx_power_dbm, s.tx_power_dbm, s.bias_ma) == ([-3.5], [1.0, None, -1000.0], [1000.0])
    lanes = "lane value out of range"
    assert _errors(out) == {
        1: ("invalid", f"rx_power_dbm: {lanes}"),
        2: ("invalid", f"tx_power_dbm: {lanes}"),
        3: ("invalid", f"bias_ma: {lanes}"),
        4: ("invalid", f"rx_power_dbm: {lanes}"),
    }


def test_the_module_s_own_thresholds_and_flags_need_known_keys_and_finite_values():
    b = {"device": "d", "port": "p", "ts": NOW.timestamp()}
    objs = [
        {
            **b,
            "module_thresholds": {"rx_power_low_alarm": -14.0},
            "module_flags": {"rx_power_low_alarm": False},
        },
        {
            **b,
            "module_thresholds": {"rx_power_low_alarm": -14.0, "rx_low": 1.0, "a": 2.0, "b": 3.0, "c": 4.0},
        },
        {**b, "module_flags": {"tx_fault": True}},
        {**b, "module_thresholds": {"temperature_high_alarm": float("inf")}},
        {**b, "rx_bits": 5, "dom_suspect": {"reasons": ["sent by a collector"]}},
    ]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    assert out.index == [0]
    assert out.samples[0].module_thresholds == {"rx_power_low_alarm": -14.0}
    assert out.samples[0].module_flags == {"rx_power_low_alarm": False}
    assert _errors(out) == {
        1: ("invalid", "module_thresholds: unknown keys ['a', 'b', 'c'] (known: <quantity>_<level>)"),
        2: ("invalid", "module_flags: unknown keys ['tx_fault'] (known: <quantity>_<level>)"),
        3: ("invalid", "module_thresholds: not a finite number"),
        4: (
            "invalid",
            "dom_suspect: decided by cabletrack from the module's own readings, not sent by a collector",
        ),
    }


def test_a_dom_reading_the_module_or_physics_contradicts_is_set_aside_and_the_rest_kept():
    """2.5-4.0 V is a powered module (inclusive); a receive power below the module's own low
    alarm while it reports that alarm Off is not believed. The suspect readings move to
    ``dom_suspect`` with the reasons; counters of the same sample are kept."""
    b = {"device": "d", "ts": TS, "rx_bits": 10, "temperature_c": 40.0, "rx_power_dbm": [-2.0, -3.0]}
    own = {"rx_power_high_alarm": 5.0, "rx_power_low_alarm": -14.0}
    items = [
        {**b, "port": "low-edge", "voltage_v": 2.5},
        {**b, "port": "high-edge", "voltage_v": 4.0},
        {**b, "port": "unpowered", "voltage_v": 2.4},
        {
            **b,
            "port": "flag-on",
            "rx_power_dbm": [-20.0],
            "module_thresholds": own,
            "module_flags": {"rx_power_low_alarm": True},
        },
        {
            **b,
            "port": "flag-off",
            "rx_power_dbm": [-2.0, -20.0],
            "module_thresholds": own,
            "module_flags": {"rx_power_low_alarm": False},
        },
    ]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    by_port = {s.port: s for s in out.samples}
    assert len(by_port) == 5 and not out.errors
    for port in ("low-edge", "high-edge", "flag-on"):
        assert by_port[port].dom_suspect is None
        assert by_port[port].temperature_c == 40.0
    assert by_port["low-edge"].voltage_v == 2.5
    assert by_port["flag-on"].rx_power_dbm == [-20.0]
    unpowered = by_port["unpowered"]
    assert unpowered.dom_suspect == {
        "reasons": ["supply voltage 2.4 V: no module runs on it (3.3 V modules)"],
        "temperature_c": 40.0,
        "voltage_v": 2.4,
        "rx_power_dbm": [-2.0, -3.0],
    }
    assert (unpowered.temperature_c, unpowered.voltage_v, unpowered.rx_power_dbm, unpowered.rx_bits) == (
        None,
        None,
        None,
        10,
    )
    flagged = by_port["flag-off"]
    assert flagged.dom_suspect["reasons"] == [
        "rx power -20 below its own low alarm -14 while the module reports that alarm Off"
    ]
    assert (flagged.rx_power_dbm, flagged.temperature_c) == (None, None)


def test_set_aside_readings_leave_no_column_behind_for_the_storage_steps():
    """A plain batch (no flags) is checked column-wise and hands its columns to storage; once a
    reading is set aside, the DOM columns computed before are dropped (storage then reads the
    samples), the others stay."""
    items = [
        {"device": "d", "port": "a", "ts": TS, "rx_bits": 1, "voltage_v": 3.3, "temperature_c": 40.0},
        {"device": "d", "port": "b", "ts": TS, "rx_bits": 2, "voltage_v": 4.01, "temperature_c": 41.0},
    ]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    assert [s.voltage_v for s in out.samples] == [3.3, None]
    assert out.samples[1].dom_suspect["voltage_v"] == 4.01
    assert out.columns["rx_bits"] == [1, 2]
    for f in ("temperature_c", "voltage_v", "bias_ma", "tx_power_dbm", "rx_power_dbm", "dom_suspect"):
        assert f not in out.columns


def test_a_batch_whose_voltages_are_all_believable_and_that_has_no_flags_is_left_as_it_is():
    items = [
        {"device": "d", "port": f"p{i}", "ts": TS, "voltage_v": v, "temperature_c": 30.0}
        for i, v in enumerate((3.3, 3.25))
    ]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    assert [(s.voltage_v, s.temperature_c, s.dom_suspect) for s in out.samples] == [
        (3.3, 30.0, None),
        (3.25, 30.0, None),
    ]
    assert out.columns["voltage_v"] == [3.3, 3.25]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "Body is not valid JSON: Input data was truncated"),
        (b"\xff\xfe", "Body is not valid JSON: JSON is malformed: invalid character (byte 0)"),
        (b"[]", 'Body must be a JSON object {"samples": [...]}: Expected `object`, got `array`'),
        (
            b'{"samples": {}}',
            'Body must be a JSON object {"samples": [...]}: Expected `array`, got `object` - at `$.samples`',
        ),
        (b'{"samples": [1]', 'Body must be a JSON object {"samples": [...]}: Input data was truncated'),
        (b'{"samples": [1, 2, 3]}', "Too many samples: more than 2 (at most 2 per request)."),
        (
            b'{"samples":' + b"[" * 3000 + b"]" * 3000 + b"}",
            "Body is nested too deeply to be a telemetry batch.",
        ),
    ],
)
def test_a_body_that_is_not_a_batch_says_why(body, message):
    with pytest.raises(BodyError) as refused:
        decode_json(body, now=NOW, max_future=timedelta(0), max_samples=2)
    assert str(refused.value) == message


def test_the_cap_is_inclusive_and_said_with_thousands_separators():
    item = {"device": "d", "port": "p", "ts": TS, "rx_bits": 1}
    out = decode_json(orjson.dumps({"samples": [item] * 3}), now=NOW, max_future=timedelta(0), max_samples=3)
    assert (out.received, len(out.samples)) == (3, 3)
    with pytest.raises(BodyError) as refused:
        decode_json(
            orjson.dumps({"samples": [item] * 1001}), now=NOW, max_future=timedelta(0), max_samples=1000
        )
    assert str(refused.value) == "Too many samples: more than 1,000 (at most 1,000 per request)."


def test_a_batch_with_bad_items_keeps_the_good_ones_with_their_decoded_values():
    items = [
        {"device": "sw1", "port": "Eth1/1", "ts": TS, "fec_corrected_codewords": 12, "pre_fec_ber": 2.5e-8},
        {"device": "sw1", "port": "Eth1/2", "ts": TS, "rx_bits": "many"},
        "not an object",
        {"device": "sw1", "port": "Eth1/3", "ts": TS, "fec_hist": [9, 8, 7], "fec_correction_limit": 15},
        {"port": "Eth1/4", "ts": TS, "rx_bits": 1},
        {"device": 7, "port": ["Eth1/5"], "ts": TS},  # names that are not text are not repeated
    ]
    out = decode_json(orjson.dumps({"samples": items}), **LIMITS)
    assert out.received == 6
    assert out.index == [0, 3]
    first, second = out.samples
    assert (first.device, first.port, first.fec_corrected_codewords, first.pre_fec_ber) == (
        "sw1",
        "Eth1/1",
        12,
        2.5e-8,
    )
    assert (second.fec_hist, second.fec_correction_limit, second.ts) == ([9, 8, 7], 15, NOW)
    assert [(e.index, e.code, e.device, e.port) for e in out.errors] == [
        (1, "invalid", "sw1", "Eth1/2"),
        (2, "malformed", None, None),
        (4, "invalid", None, "Eth1/4"),
        (5, "invalid", None, None),
    ]
    assert out.errors[0].message == "Expected `int | null`, got `str` - at `$.rx_bits`"
    assert out.errors[1].message == "an item must be a JSON object"
    assert out.errors[2].message == "Object missing required field `device`"


def test_an_adapter_s_bad_item_is_its_own_error_with_its_index():
    good = {"device": "d", "port": "p", "ts": NOW.timestamp(), "rx_bits": 1}
    objs = [{**good, "ts": "yesterday"}, ["x"], {**good, "fec_hist": [[1]]}, good]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    assert (out.received, out.index) == (4, [3])
    assert [(e.index, e.code, e.message, e.device, e.port) for e in out.errors] == [
        (0, "invalid", "Invalid RFC3339 encoded datetime - at `$.ts`", "d", "p"),
        (1, "malformed", "an item must be a JSON object", None, None),
        (2, "invalid", "Expected `int`, got `array` - at `$.fec_hist[0]`", "d", "p"),
    ]


def test_every_format_refuses_items_older_than_the_raw_retention():
    old = {"device": "d", "port": "p", "ts": (NOW - timedelta(days=3)).isoformat(), "rx_bits": 1}
    new = {**old, "ts": TS}
    window = dict(now=NOW, max_future=timedelta(0), max_age=timedelta(days=2))
    outs = [
        decode_json(orjson.dumps({"samples": [old, new]}), max_samples=10, **window),
        decode_ndjson(orjson.dumps(old) + b"\n" + orjson.dumps(new), max_samples=10, **window),
        decode_objects([old, new], **window),
    ]
    for out in outs:
        assert out.index == [1]
        assert [(e.index, e.code) for e in out.errors] == [(0, "too_old")]


def test_a_plain_batch_hands_storage_the_columns_of_its_values_at_every_edge():
    """A batch with nothing to refuse is checked column by column, and storage reads those
    columns instead of walking the items again: each column is exactly the samples' values
    (None when no item carries the field). The items sit on every edge a check has: the
    oldest and latest time kept, the largest counter, a lane at 1000, a single-number lane."""
    top = (1 << 64) - 1
    window = dict(now=NOW, max_future=timedelta(minutes=5), max_age=timedelta(days=2))
    oldest, latest = NOW - timedelta(days=2), NOW + timedelta(minutes=5)
    items = [
        {
            "device": "d",
            "port": "a",
            "ts": oldest.isoformat(),
            "rx_bits": top,
            "pre_fec_ber": 1e-8,
            "rx_power_dbm": -2.5,
        },
        {
            "device": "d",
            "port": "b",
            "ts": latest.isoformat(),
            "temperature_c": 41.5,
            "bias_ma": [1000.0, None, 6.5],
        },
        {
            "device": "d",
            "port": "c",
            "ts": TS,
            "fec_hist": [3, 2, 1],
            "link_down_events": 0,
            "tx_power_dbm": [-1000.0],
        },
    ]
    out = decode_json(json.dumps({"samples": items}).encode(), max_samples=10, **window)
    assert not out.errors
    assert out.samples[0].rx_power_dbm == [-2.5]
    assert out.columns["ts"] == [oldest, latest, NOW]
    expected = {
        "rx_bits": [top, None, None],
        "link_down_events": [None, None, 0],
        "fec_corrected_codewords": None,
        "pre_fec_ber": [1e-8, None, None],
        "temperature_c": [None, 41.5, None],
        "voltage_v": None,
        "rx_power_dbm": [[-2.5], None, None],
        "bias_ma": [None, [1000.0, None, 6.5], None],
        "tx_power_dbm": [None, None, [-1000.0]],
        "fec_hist_bins": None,
        "module_flags": None,
    }
    assert {k: out.columns[k] for k in expected} == expected
    for name, column in out.columns.items():
        values = [getattr(s, name) for s in out.samples]
        assert column == (None if values == [None] * 3 else values), name


DUPLICATE = "Duplicate key {key!r} in a JSON object{where}: send each key once; nothing was stored."


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"samples": [' + _line(rx_bits=1)[:-1] + b', "rx_bits": 2}]}', "rx_bits"),
        (b'{"samples": [' + _line() + b'], "samples": []}', "samples"),
        (b'{"samples": [' + _line(module_flags={"rx_los": True})[:-2] + b', "rx_los": false}}]}', "rx_los"),
    ],
    ids=["a sample's field", "the batch's own samples", "a module flag"],
)
def test_a_key_named_twice_refuses_the_whole_json_batch_and_names_the_key(body, key):
    """msgspec keeps the last copy of a repeated key and another reader the first: the body says
    two things, so none of it is stored, and the collector is told which key."""
    with pytest.raises(BodyError) as refused:
        decode_json(body, **LIMITS)
    assert str(refused.value) == DUPLICATE.format(key=key, where="")


def test_a_key_named_twice_on_an_ndjson_line_names_the_line_as_item_errors_count_them():
    """Blank lines are not items; a malformed line before the repeated key is still an item, so
    the third non-blank line is item 2, whichever way the lines were checked."""
    twice = _line(port="b")[:-1] + b', "port": "c"}'
    body = b"\n".join([_line(port="a"), b"", b'{"device": "d"', twice, _line(port="e")])
    with pytest.raises(BodyError) as refused:
        decode_ndjson(body, **LIMITS)
    assert str(refused.value) == DUPLICATE.format(
        key="port", where=" (item 2, as item errors count the lines)"
    )
    clean = b"\n".join([_line(port="a"), twice])
    with pytest.raises(BodyError) as refused:
        decode_ndjson(clean, **LIMITS)
    assert str(refused.value) == DUPLICATE.format(
        key="port", where=" (item 1, as item errors count the lines)"
    )


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [
        ("pre_fec_ber", "0.0", "1.0"),
        ("post_fec_ber", "0.0", "1.0"),
        ("temperature_c", "-100.0", "250.0"),
        ("voltage_v", "0.0", "100.0"),
    ],
)
def test_a_reading_that_is_not_a_finite_number_is_refused_by_its_bounds(field, low, high):
    """An adapter's NaN or infinity (and a JSON number too large for a float) never reaches
    storage: the field's bounds refuse it and name the field; the other items are kept."""
    b = {"device": "d", "port": "p", "ts": NOW.timestamp(), "rx_bits": 1}
    objs = [{**b, field: math.nan}, {**b, field: math.inf}, {**b, field: -math.inf}, b]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    assert [(e.index, e.code, e.message) for e in out.errors] == [
        (0, "invalid", f"Expected `float` >= {low} - at `$.{field}`"),
        (1, "invalid", f"Expected `float` <= {high} - at `$.{field}`"),
        (2, "invalid", f"Expected `float` >= {low} - at `$.{field}`"),
    ]
    assert out.index == [3]
    body = b'{"samples": [' + _line()[:-1] + f', "{field}": 1e999}}]}}'.encode()
    out = decode_json(body, **LIMITS)
    assert [(e.code, e.message) for e in out.errors] == [
        ("malformed", f"not valid JSON: Number out of range - at `$.{field}`")
    ]


def test_an_adapter_item_nested_as_deep_as_python_allows_is_an_item_error_not_a_crash():
    """An adapter hands over dicts: a deep value in a stored field is refused at its first level,
    one in a field the sample does not have is never read."""
    deep: list = []
    cur = deep
    for _ in range(100_000):
        cur.append([])
        cur = cur[0]
    b = {"device": "d", "port": "p", "ts": NOW.timestamp()}
    out = decode_objects(
        [{**b, "rx_bits": deep}, {**b, "extra": deep, "rx_bits": 5}], now=NOW, max_future=timedelta(0)
    )
    assert [(e.index, e.code, e.message) for e in out.errors] == [
        (0, "invalid", "Expected `int | null`, got `array` - at `$.rx_bits`")
    ]
    assert [s.rx_bits for s in out.samples] == [5]


def _item(**kw) -> dict:
    """An adapter's item, its time as adapters write it (RFC 3339 in UTC: the column-wise path)."""
    return {"device": "d", "port": "p", "ts": TS, **kw}


def test_a_plain_batch_refuses_an_item_without_a_reading_with_its_device_and_port():
    """The column-wise check passes a batch only when a column is full; an item with no reading
    beside items that all carry one counter is still refused, naming where it came from."""
    objs = [_item(rx_bits=1), _item(port="p2"), _item(rx_bits=3, fec_corrected_codewords=2)]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    assert [(e.index, e.code, e.device, e.port) for e in out.errors] == [(1, "no_data", "d", "p2")]
    assert out.errors[0].message.startswith("the item carries no reading cabletrack stores")
    assert out.index == [0, 2]


@pytest.mark.parametrize("field", ["rx_power_dbm", "tx_power_dbm", "bias_ma"])
def test_every_lane_field_is_bounded_in_a_plain_batch(field):
    """A lane value past 1,000 (no dBm or mA reading is) is refused in a batch that is otherwise
    plain, whichever lane field carries it and whether the fields before it are absent."""
    objs = [_item(rx_bits=1, **{field: [1000.0, -1000.0]}), _item(rx_bits=2, **{field: [1.0, 1000.5]})]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    assert [(e.index, e.code, e.message, e.device, e.port) for e in out.errors] == [
        (1, "invalid", f"{field}: lane value out of range", "d", "p")
    ]
    assert [getattr(s, field) for s in out.samples] == [[1000.0, -1000.0]]


def test_a_batch_with_the_module_s_judgement_is_still_checked_item_by_item():
    """Thresholds and flags send the batch to the item-wise check; the other items' problems
    are still found there (an item with no reading, a lane out of range; a future time)."""
    all_twenty = {k: 1.0 for k in MODULE_KEYS}
    objs = [
        _item(voltage_v=3.3, module_thresholds=all_twenty),
        _item(port="p1"),
        _item(port="p2", bias_ma=[1001.0]),
    ]
    out = decode_objects(objs, now=NOW, max_future=timedelta(minutes=1))
    assert [(e.index, e.code, e.device, e.port) for e in out.errors] == [
        (1, "no_data", "d", "p1"),
        (2, "invalid", "d", "p2"),
    ]
    assert out.samples[0].module_thresholds == all_twenty  # every key the module may hold
    later = (NOW + timedelta(seconds=61)).isoformat()
    out = decode_objects([_item(port="p3", rx_bits=1, ts=later)], now=NOW, max_future=timedelta(minutes=1))
    assert [(e.code, e.device, e.port, e.message) for e in out.errors] == [
        ("future_ts", "d", "p3", f"ts {later} is more than 60 s in the future")
    ]


def test_the_module_s_own_alarm_flag_is_judged_when_the_supply_voltage_is_plausible():
    """A module whose temperature is above its own high alarm while it says that alarm is Off
    contradicts itself: set aside, although its 3.3 V looks right; a module that agrees with
    itself is kept."""
    thresholds = {"temperature_high_alarm": 70.0, "temperature_low_alarm": -5.0}
    liar = _item(
        temperature_c=80.0,
        voltage_v=3.3,
        module_thresholds=thresholds,
        module_flags={"temperature_high_alarm": False},
    )
    honest = _item(
        port="p2",
        temperature_c=80.0,
        voltage_v=3.3,
        module_thresholds=thresholds,
        module_flags={"temperature_high_alarm": True},
    )
    out = decode_objects([liar, honest], now=NOW, max_future=timedelta(0))
    first, second = out.samples
    assert (first.temperature_c, first.voltage_v) == (None, None)
    assert first.dom_suspect["reasons"] == [
        "temperature 80 above its own high alarm 70 while the module reports that alarm Off"
    ]
    assert (second.temperature_c, second.dom_suspect) == (80.0, None)


def test_a_plain_batch_with_an_impossible_voltage_hands_storage_no_dom_column():
    """The column-wise path fills the columns the storage steps read; a reading set aside must
    leave none behind, or the impossible values would be stored after all."""
    objs = [_item(voltage_v=0.2287, temperature_c=0.0), _item(port="p2", voltage_v=3.3, temperature_c=40.0)]
    out = decode_objects(objs, now=NOW, max_future=timedelta(0))
    assert out.errors == []
    assert "voltage_v" not in out.columns and "temperature_c" not in out.columns
    assert [(s.voltage_v, s.temperature_c) for s in out.samples] == [(None, None), (3.3, 40.0)]
    assert out.samples[0].dom_suspect["voltage_v"] == 0.2287


def test_a_json_batch_with_a_bad_item_still_refuses_old_items_one_by_one_and_deep_ones_whole():
    """When one item is invalid the batch is read item by item; the raw retention still applies
    to each of the others. An item nested past the limit after it refuses the whole body (the
    item-by-item read meets it while reading the batch), as it would in first place."""
    old = (NOW - timedelta(days=3)).isoformat()
    window = dict(now=NOW, max_future=timedelta(0), max_samples=10, max_age=timedelta(days=2))
    body = b'{"samples": [{"device": 1}, ' + _line(port="old", ts=old) + b", " + _line(port="ok") + b"]}"
    out = decode_json(body, **window)
    assert [(e.index, e.code) for e in out.errors] == [(0, "invalid"), (1, "too_old")]
    assert out.errors[1].message == (
        f"ts {old} is older than the raw retention (2 days): it would be deleted at once and cannot "
        "change the stored rollups"
    )
    assert [s.port for s in out.samples] == ["ok"]
    deep = b'{"device": "d", "port": "deep", "ts": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    with pytest.raises(BodyError) as refused:
        decode_json(b'{"samples": [{"device": 1}, ' + deep + b"]}", **window)
    assert str(refused.value) == "Body is nested too deeply to be a telemetry batch."


def test_a_field_cabletrack_does_not_read_nested_past_the_limit_refuses_the_json_body():
    """The typed read skips a field it does not know, but skipping 5,000 levels of nesting
    exhausts the stack: the batch is refused whole, in words, not answered with a 500."""
    deep = b"[" * 5000 + b"]" * 5000
    body = b'{"samples": [' + _line()[:-1] + b', "extra": ' + deep + b"}]}"
    with pytest.raises(BodyError) as refused:
        decode_json(body, **LIMITS)
    assert str(refused.value) == "Body is nested too deeply to be a telemetry batch."


def test_a_leading_byte_order_mark_is_dropped_from_json_and_ndjson_bodies():
    """Windows tools save UTF-8 text with a byte-order mark; the native formats read such a body
    as they read it without (the native adapters already did). Before, the JSON batch was refused
    as invalid JSON and the NDJSON body's first line was a malformed item."""
    bom = b"\xef\xbb\xbf"
    one = {"device": "leaf-1", "port": "Ethernet1/1", "ts": TS, "fec_corrected_codewords": 7}
    two = {**one, "port": "Ethernet1/2"}
    batch = orjson.dumps({"samples": [one, two]})
    with_bom = decode_json(bom + batch, **LIMITS)
    assert with_bom == decode_json(batch, **LIMITS)
    assert with_bom.errors == [] and [s.port for s in with_bom.samples] == ["Ethernet1/1", "Ethernet1/2"]
    lines = orjson.dumps(one) + b"\n" + orjson.dumps(two) + b"\n"
    with_bom = decode_ndjson(bom + lines, **LIMITS)
    assert with_bom == decode_ndjson(lines, **LIMITS)
    assert with_bom.errors == [] and [s.port for s in with_bom.samples] == ["Ethernet1/1", "Ethernet1/2"]
    # only a leading mark: one inside the body is still what it is
    with pytest.raises(BodyError):
        decode_json(batch + bom, **LIMITS)
