"""Property tests of telemetry intake (issue 8, "Bad input"), with hypothesis.

* Any bytes, in any native format, and any JSON value as a batch: the adapters raise nothing but
  ``AdapterError`` (a 400), the decoder nothing but ``BodyError``; everything else is per item.
* Mutated real collector outputs (tests/inventory/telemetry/data) likewise.
* Valid generated samples posted to ``/api/telemetry/`` come back from the database as sent:
  every unsigned 64-bit counter exactly, gauges and per-lane values as floats.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.core.choices import TokenKind
from inventory.core.telemetry import adapters
from inventory.core.telemetry.decode import COUNTER_FIELDS, BodyError, decode_json, decode_objects
from inventory.models import TelemetryLaneSample, TelemetrySample
from tests import factories as f
from tests.paths import TEST_DATA

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
LIMITS = dict(now=NOW, max_future=timedelta(minutes=5), max_samples=10_000)
CTX = adapters.Context(device="host-a", port="p1", ts=NOW)
DATA = TEST_DATA / "telemetry"
REAL = sorted(p for p in DATA.iterdir() if p.suffix in (".txt", ".json"))
FORMATS = sorted(adapters.FORMATS)

json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _adapt(fmt: str, body: bytes) -> None:
    """Parse ``body`` as ``fmt`` and decode what comes out, as the endpoint does."""
    try:
        objs = adapters.parse(fmt, body, CTX)
    except adapters.AdapterError as exc:
        reason = str(exc)
        assert reason  # a reason a collector's operator can read  # noqa: PT017
        return
    assert isinstance(objs, list) and all(isinstance(o, dict) for o in objs)
    out = decode_objects(objs, now=NOW, max_future=LIMITS["max_future"])
    assert len(out.samples) + len(out.errors) == out.received == len(objs)


@settings(max_examples=200, deadline=None)
@given(fmt=st.sampled_from(FORMATS), body=st.binary(max_size=600))
def test_any_bytes_in_any_native_format_are_read_or_refused(fmt, body):
    _adapt(fmt, body)


@settings(max_examples=150, deadline=None)
@given(fmt=st.sampled_from(FORMATS), value=json_value)
def test_any_json_in_any_native_format_is_read_or_refused(fmt, value):
    _adapt(fmt, json.dumps(value).encode())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from([p.name for p in REAL]),
    fmt=st.sampled_from(FORMATS),
    edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=8),
    cut=st.none() | st.integers(0, 1 << 16),
)
def test_mutated_real_collector_outputs_are_read_or_refused(name, fmt, edits, cut):
    data = bytearray((DATA / name).read_bytes())
    for pos, value in edits:
        data[pos % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _adapt(fmt, bytes(data))


@settings(max_examples=150, deadline=None)
@given(value=json_value)
def test_any_json_value_as_a_batch_is_a_body_error_or_items(value):
    for body in (json.dumps(value).encode(), json.dumps({"samples": value}).encode()):
        try:
            out = decode_json(body, **LIMITS)
        except BodyError as exc:
            reason = str(exc)
            assert reason  # noqa: PT017
            continue
        assert len(out.samples) + len(out.errors) == out.received


# --- round trip through the endpoint to the database ------------------------------------------

u64 = st.integers(0, (1 << 64) - 1)
dbm = st.floats(-40, 10, allow_nan=False, width=32)
sample_values = st.fixed_dictionaries(
    {},
    optional={
        **{name: u64 for name in COUNTER_FIELDS},
        "pre_fec_ber": st.floats(0, 1, allow_nan=False),
        "post_fec_ber": st.floats(0, 1, allow_nan=False),
        "temperature_c": st.floats(-40, 125, allow_nan=False),
        "voltage_v": st.floats(2.5, 4.0, allow_nan=False),  # a 3.3 V module (else: sensor suspect)
        "rx_power_dbm": st.lists(st.none() | dbm, min_size=1, max_size=8),
    },
).filter(bool)  # a sample with a reading (device, port and ts alone are refused as no_data)
# the model's column for each sample field where the names differ
COLUMN = {
    "fec_corrected_codewords": "fec_corrected_cw",
    "fec_uncorrectable_codewords": "fec_uncorrectable_cw",
}


@pytest.fixture
def collector(db, user_with_role):
    f.twin_port_device("leaf-p1")
    return f.api_token_client(user_with_role("collector"), TokenKind.INGEST)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# Anything within the raw retention (14 days) is stored; older is refused per item as too_old
# (tests/inventory/api/test_telemetry_poison.py).
@given(batch=st.lists(sample_values, min_size=1, max_size=6), minutes_ago=st.integers(1, 60 * 24 * 13))
def test_valid_samples_round_trip_to_the_stored_values(collector, batch, minutes_ago):
    TelemetryLaneSample.objects.all().delete()
    TelemetrySample.objects.all().delete()
    start = (datetime.now(UTC) - timedelta(minutes=minutes_ago + 10)).replace(microsecond=0)
    samples = [
        f.telemetry_sample("leaf-p1", "Ethernet1/1", start + timedelta(seconds=i), **values)
        for i, values in enumerate(batch)
    ]
    r = collector.post("/api/telemetry/", json.dumps({"samples": samples}), content_type="application/json")
    assert r.status_code == 200, r.content
    assert r.json()["stored"] == len(batch) and r.json()["errors"] == []
    stored = {s.ts: s for s in TelemetrySample.objects.all()}
    lanes = {s.ts: s for s in TelemetryLaneSample.objects.all()}
    assert len(stored) == len(batch)
    for i, values in enumerate(batch):
        ts = start + timedelta(seconds=i)
        row = stored[ts]
        for name in (*COUNTER_FIELDS, "pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v"):
            got = getattr(row, COLUMN.get(name, name))
            assert got == values.get(name), (name, got, values.get(name))
        if "rx_power_dbm" in values:
            want = [None if v is None else float(np.float32(v)) for v in values["rx_power_dbm"]]
            got = [None if v is None else float(np.float32(v)) for v in lanes[ts].rx_power_dbm]
            assert got == want
