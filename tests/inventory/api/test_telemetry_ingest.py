"""POST /api/telemetry/: formats, per-item errors, idempotency, limits, permissions.

Topology for most tests (one leaf with two twin-port OSFP cages, four 400G ports)::

    [leaf-t1 Ethernet1/1] [Ethernet1/2] [Ethernet2/1] [Ethernet2/2]
"""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import TokenKind
from inventory.models import (
    Device,
    PortAlias,
    PortObservation,
    TelemetryHistogram,
    TelemetryIngestBatch,
    TelemetryLaneSample,
    TelemetrySample,
)
from inventory.services.plant.ports import port_rename
from tests import factories as f

pytestmark = pytest.mark.django_db
URL = "/api/telemetry/"


@pytest.fixture
def leaf():
    dev, ports = f.twin_port_device("leaf-t1")
    return dev, ports


@pytest.fixture
def ingest_client(user_with_role):
    return f.api_token_client(user_with_role("collector"), TokenKind.INGEST)


def _ts(minutes_ago: float = 1) -> datetime:
    return (timezone.now() - timedelta(minutes=minutes_ago)).replace(microsecond=0)


def post_json(client, samples, **extra):
    return client.post(URL, data=json.dumps({"samples": samples}), content_type="application/json", **extra)


def test_json_batch_is_stored_with_lanes_histogram_and_identity(ingest_client, leaf):
    ts = _ts()
    sample = f.telemetry_sample(
        "leaf-t1",
        "Ethernet1/1",
        ts,
        fec_corrected_codewords=1000,
        fec_uncorrectable_codewords=0,
        fec_corrected_bits=1200,
        fec_symbol_errors=1100,
        rx_power_dbm=[-1.5, -2.0, -1.75, -2.25],
        tx_power_dbm=1.5,
        temperature_c=55.5,
        fec_hist=[10_000_000, 900, 90, 9],
        module_vendor="NVIDIA",
        module_part="MMS4X00-NM",
        module_serial="MT-NEW-1",
    )
    r = post_json(ingest_client, [sample])
    assert r.status_code == 200, r.content
    assert r.json() == {
        "received": 1,
        "stored": 1,
        "duplicates": 0,
        "rejected": 0,
        "errors": [],
        "ignored": {"count": 0, "fields": {}},
    }
    row = TelemetrySample.objects.get(port=leaf[1][0], ts=ts)
    assert (row.fec_corrected_cw, row.fec_corrected_bits, row.temperature_c) == (1000, 1200, 55.5)
    lanes = TelemetryLaneSample.objects.get(port=leaf[1][0], ts=ts)
    assert lanes.rx_power_dbm == [-1.5, -2.0, -1.75, -2.25]
    assert lanes.tx_power_dbm == [1.5]
    hist = TelemetryHistogram.objects.select_related("layout").get(port=leaf[1][0], ts=ts)
    assert hist.counts == [10_000_000, 900, 90, 9]
    assert hist.layout.bin_low == [0, 1, 2, 3] and hist.layout.correction_limit == 15
    assert PortObservation.objects.get(port=leaf[1][0]).module_serial == "MT-NEW-1"
    assert TelemetryIngestBatch.objects.get().port_ids == [leaf[1][0].pk]


def test_ndjson_body(ingest_client, leaf):
    ts = _ts()
    lines = [
        orjson.dumps(f.telemetry_sample("leaf-t1", p.name, ts, fec_corrected_codewords=i))
        for i, p in enumerate(leaf[1])
    ]
    r = ingest_client.post(URL, data=b"\n".join(lines) + b"\n", content_type="application/x-ndjson")
    assert r.status_code == 200, r.content
    assert r.json()["stored"] == 4
    assert TelemetrySample.objects.count() == 4


def test_unknown_device_and_port_are_reported_with_their_index_and_the_rest_kept(ingest_client, leaf):
    ts = _ts()
    samples = [
        f.telemetry_sample("leaf-t1", "Ethernet1/1", ts, fec_corrected_codewords=1),
        f.telemetry_sample("leaf-t1", "Ethernet9/9", ts, fec_corrected_codewords=1),
        f.telemetry_sample("no-such-leaf", "Ethernet1/1", ts, fec_corrected_codewords=1),
        f.telemetry_sample("leaf-t1", "Ethernet1/2", ts, fec_corrected_codewords="many"),
        f.telemetry_sample("leaf-t1", "Ethernet2/1", _ts(-60), fec_corrected_codewords=1),
        "not an object",
        f.telemetry_sample("leaf-t1", "Ethernet2/2", ts, fec_corrected_codewords=-5),
        f.telemetry_sample("leaf-t1", "Ethernet2/2", "yesterday"),
        f.telemetry_sample("leaf-t1", "Ethernet2/2", ts, fec_corrected_codewords=7),
    ]
    r = post_json(ingest_client, samples)
    assert r.status_code == 200
    body = r.json()
    codes = {e["index"]: e["code"] for e in body["errors"]}
    assert codes == {
        1: "unknown_port",
        2: "unknown_device",
        3: "invalid",
        4: "future_ts",
        5: "malformed",
        6: "invalid",
        7: "invalid",
    }
    assert body["errors"][0]["port"] == "Ethernet9/9"
    assert "fec_corrected_codewords" in body["errors"][2]["message"]
    assert (body["received"], body["stored"], body["rejected"]) == (9, 2, 7)
    assert set(TelemetrySample.objects.values_list("port_id", flat=True)) == {leaf[1][0].pk, leaf[1][3].pk}


def test_repost_is_idempotent_and_changed_values_are_refused(ingest_client, leaf):
    ts = _ts()
    samples = [
        f.telemetry_sample("leaf-t1", p.name, ts, fec_corrected_codewords=10, rx_power_dbm=[-1.1, -2.2])
        for p in leaf[1]
    ]
    assert post_json(ingest_client, samples).json()["stored"] == 4
    again = post_json(ingest_client, samples).json()
    assert (again["stored"], again["duplicates"], again["rejected"]) == (0, 4, 0)
    changed = [
        dict(samples[0], fec_corrected_codewords=11),
        samples[1],
        dict(samples[2], rx_power_dbm=[-3.0, -2.2]),
    ]
    later = f.telemetry_sample(
        "leaf-t1", "Ethernet1/1", ts + timedelta(seconds=10), fec_corrected_codewords=12
    )
    r = post_json(ingest_client, [*changed, later]).json()
    assert [(e["index"], e["code"]) for e in r["errors"]] == [(0, "conflict"), (2, "conflict")]
    assert (r["stored"], r["duplicates"]) == (1, 1)
    assert TelemetrySample.objects.count() == 5
    assert TelemetrySample.objects.get(port=leaf[1][0], ts=ts).fec_corrected_cw == 10
    assert TelemetryLaneSample.objects.get(port=leaf[1][2], ts=ts).rx_power_dbm == pytest.approx([-1.1, -2.2])


def test_duplicates_within_one_batch(ingest_client, leaf):
    ts = _ts()
    s = f.telemetry_sample("leaf-t1", "Ethernet1/1", ts, fec_corrected_codewords=5)
    r = post_json(ingest_client, [s, s, dict(s, fec_corrected_codewords=6)]).json()
    assert (r["stored"], r["duplicates"]) == (1, 1)
    assert r["errors"][0]["index"] == 2 and r["errors"][0]["code"] == "conflict"


def test_unsigned_64_bit_counters_are_stored_exactly(ingest_client, leaf):
    ts = _ts()
    top = (1 << 64) - 1
    s = f.telemetry_sample("leaf-t1", "Ethernet1/1", ts, rx_bits=top, fec_corrected_bits=(1 << 63) + 1)
    too_big = f.telemetry_sample("leaf-t1", "Ethernet1/2", ts, rx_bits=top + 1)
    r = post_json(ingest_client, [s, too_big]).json()
    assert r["stored"] == 1 and r["errors"][0]["index"] == 1
    row = TelemetrySample.objects.get(port=leaf[1][0], ts=ts)
    assert row.rx_bits == top and row.fec_corrected_bits == (1 << 63) + 1
    assert post_json(ingest_client, [s]).json()["duplicates"] == 1


def test_renamed_port_resolves_by_old_name_at_the_sample_time(ingest_client, leaf):
    port = leaf[1][0]
    renamed_at = timezone.now() - timedelta(hours=1)
    PortAlias.objects.filter(port=port).update(valid_from=renamed_at - timedelta(days=30))
    port_rename(port=port, new_name="swp1", now=renamed_at)
    old = f.telemetry_sample(
        "leaf-t1", "Ethernet1/1", renamed_at - timedelta(hours=1), fec_corrected_codewords=1
    )
    new = f.telemetry_sample("leaf-t1", "swp1", _ts(), fec_corrected_codewords=2)
    stale = f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(), fec_corrected_codewords=3)
    r = post_json(ingest_client, [old, new, stale]).json()
    assert r["stored"] == 2
    assert [(e["index"], e["code"]) for e in r["errors"]] == [(2, "unknown_port")]
    assert TelemetrySample.objects.filter(port=port).count() == 2


def test_malformed_body_is_400_and_writes_nothing(ingest_client, leaf):
    for body in (b"{not json", b'{"rows": []}', b"[1, 2]", b'{"samples": 5}'):
        r = ingest_client.post(URL, data=body, content_type="application/json")
        assert r.status_code == 400, body
    assert not TelemetrySample.objects.exists()


def _dup(sample: dict, field: str, second) -> str:
    """``sample`` as JSON text with ``field`` written a second time, holding ``second``."""
    text = json.dumps(sample)
    return text[:-1] + f", {json.dumps(field)}: {json.dumps(second)}}}"


def test_a_key_named_twice_anywhere_is_a_400_naming_it_and_nothing_is_stored(ingest_client, leaf):
    """msgspec keeps the last copy of a repeated key, another reader the first: the body says
    two things, so none of it is stored, whichever object repeats the key."""
    ts = _ts()
    good = f.telemetry_sample("leaf-t1", "Ethernet1/2", ts, fec_corrected_codewords=1)
    sample = f.telemetry_sample("leaf-t1", "Ethernet1/1", ts, fec_corrected_codewords=5)
    flags = json.dumps({"temperature_high_alarm": False})[:-1] + ', "temperature_high_alarm": true}'
    bodies = {
        "fec_corrected_codewords": f'{{"samples": [{json.dumps(good)}, {_dup(sample, "fec_corrected_codewords", 9)}]}}',
        "samples": f'{{"samples": [{json.dumps(good)}], "samples": []}}',
        "temperature_high_alarm": f'{{"samples": [{json.dumps(sample)[:-1]}, "module_flags": {flags}}}]}}',
        # a field cabletrack ignores is read all the same
        "extra": f'{{"samples": [{json.dumps(sample)[:-1]}, "vendor": {{"extra": 1, "extra": 2}}}}]}}',
        # written apart by white space, or once as an escape: the same key
        "port": f'{{"samples": [{json.dumps(sample)[:-1]}, "port" : "Ethernet1/2"}}]}}',
        "device": f'{{"samples": [{json.dumps(sample)[:-1]}, "\\u0064evice": "leaf-x"}}]}}',
    }
    for key, body in bodies.items():
        r = ingest_client.post(URL, data=body, content_type="application/json")
        assert r.status_code == 400, (key, r.content)
        assert f"Duplicate key {key!r}" in r.json()["detail"], r.json()
    lines = [orjson.dumps(good).decode(), _dup(sample, "ts", ts.isoformat())]
    r = ingest_client.post(URL, data="\n".join(lines), content_type="application/x-ndjson")
    assert r.status_code == 400
    assert r.json()["detail"].startswith("Duplicate key 'ts' in a JSON object (item 1")
    native = '[{"ifname": "eth0", "ifname": "eth1", "statistics": {"corrected_blocks": {"total": 3}}}]'
    r = ingest_client.post(
        URL + "?format=ethtool-fec&device=leaf-t1", data=native, content_type="application/json"
    )
    assert r.status_code == 400 and "Duplicate key 'ifname'" in r.json()["detail"]
    assert not TelemetrySample.objects.exists()
    assert not TelemetryIngestBatch.objects.exists()
    # the same bodies without the repeat are stored
    r = post_json(ingest_client, [good, sample])
    assert r.status_code == 200 and r.json()["stored"] == 2


@override_settings(CABLETRACK_TELEMETRY_MAX_BODY_BYTES=2_000)
def test_oversized_body_is_413(ingest_client, leaf):
    ts = _ts()
    samples = [f.telemetry_sample("leaf-t1", "Ethernet1/1", ts + timedelta(seconds=i)) for i in range(40)]
    r = post_json(ingest_client, samples)
    assert r.status_code == 413
    body = gzip.compress(orjson.dumps({"samples": samples}))
    assert len(body) < 2_000
    r = ingest_client.post(URL, data=body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
    assert r.status_code == 413  # the cap applies after decompression too
    assert not TelemetrySample.objects.exists()


def test_large_batch_beyond_djangos_upload_limit_is_accepted(ingest_client, leaf):
    """5,000 samples are about 1 MB: our own cap, not DATA_UPLOAD_MAX_MEMORY_SIZE, applies."""
    base = _ts(120)
    samples = [
        f.telemetry_sample(
            "leaf-t1", leaf[1][i % 4].name, base + timedelta(seconds=i // 4), fec_corrected_codewords=i
        )
        for i in range(5_000)
    ]
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=100_000):
        r = post_json(ingest_client, samples)
    assert r.status_code == 200, r.content[:300]
    assert r.json()["stored"] == 5_000


def test_gzip_body(ingest_client, leaf):
    body = gzip.compress(
        orjson.dumps({"samples": [f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(), link_down_events=0)]})
    )
    r = ingest_client.post(URL, data=body, content_type="application/json", HTTP_CONTENT_ENCODING="gzip")
    assert r.status_code == 200 and r.json()["stored"] == 1


def test_wrong_content_type_or_format_is_415(ingest_client, leaf):
    assert ingest_client.post(URL, data=b"<x/>", content_type="application/xml").status_code == 415
    assert ingest_client.post(URL, data=b"a,b", content_type="text/csv").status_code == 415
    assert (
        ingest_client.post(URL + "?format=nope", data=b"{}", content_type="application/json").status_code
        == 415
    )
    assert ingest_client.post(URL, data=b"x", content_type="text/plain").status_code == 415
    assert not TelemetrySample.objects.exists()


def test_native_format_without_device_is_400(ingest_client, leaf):
    r = ingest_client.post(
        URL + "?format=ethtool-fec", data=b"FEC parameters for Ethernet1/1:\n", content_type="text/plain"
    )
    assert r.status_code == 400
    assert "device" in r.json()["detail"]


def test_permissions(user_with_role, leaf):
    sample = [f.telemetry_sample("leaf-t1", "Ethernet1/1", _ts(), link_down_events=0)]
    anonymous = post_json(APIClient(), sample)
    assert anonymous.status_code == 401
    read_only = f.api_token_client(user_with_role("engineer"), TokenKind.READ_ONLY)
    assert post_json(read_only, sample).status_code == 403
    viewer = f.api_token_client(user_with_role("viewer"), TokenKind.FULL)
    assert post_json(viewer, sample).status_code == 403
    ingest = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    assert post_json(ingest, sample).status_code == 200
    # an ingest token can do nothing else
    assert ingest.get("/api/devices/").status_code == 403
    assert ingest.get(URL).status_code == 405
    assert TelemetrySample.objects.count() == 1


def test_schema_documents_the_per_item_policy(engineer_api):
    r = engineer_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert r.status_code == 200
    op = orjson.loads(r.content)["paths"]["/api/telemetry/"]["post"]
    assert "valid items of the batch are kept" in op["description"]
    assert {"200", "400", "413", "415"} <= set(op["responses"])


def test_device_names_are_exact(ingest_client, leaf):
    Device.objects.create(name="LEAF-T1", role="leaf")
    r = post_json(
        ingest_client, [f.telemetry_sample("LEAF-T1", "Ethernet1/1", _ts(), link_down_events=0)]
    ).json()
    assert r["errors"][0]["code"] == "unknown_port"


def test_epoch_timestamps(ingest_client, leaf):
    ts = _ts()
    r = post_json(
        ingest_client, [f.telemetry_sample("leaf-t1", "Ethernet1/1", ts.timestamp(), link_down_events=0)]
    ).json()
    assert r["stored"] == 1
    assert TelemetrySample.objects.get().ts == ts.astimezone(UTC)


def test_a_null_lane_is_stored_as_null_not_nan(ingest_client, leaf):
    """Lane lists of one length go by COPY BINARY built with numpy, which reads a None as NaN:
    a lane the module did not report must stay unknown (NULL), as text COPY stores it."""
    ts = _ts()
    samples = [
        f.telemetry_sample("leaf-t1", "Ethernet1/1", ts, rx_power_dbm=[-1.5, None]),
        f.telemetry_sample("leaf-t1", "Ethernet1/2", ts, rx_power_dbm=[-2.0, -2.5]),
    ]
    r = post_json(ingest_client, samples)
    assert r.status_code == 200, r.content
    assert r.json()["stored"] == 2
    by_port = dict(TelemetryLaneSample.objects.values_list("port__name", "rx_power_dbm"))
    assert by_port == {"Ethernet1/1": [-1.5, None], "Ethernet1/2": [-2.0, -2.5]}


def test_an_item_with_no_reading_is_refused_by_itself_as_no_data(ingest_client, leaf):
    """device, port and ts alone (or with only fields cabletrack does not know) store nothing:
    the item is an error naming why, never a 200 that stored an empty sample."""
    ts = _ts()
    r = post_json(
        ingest_client,
        [
            f.telemetry_sample("leaf-t1", "Ethernet1/1", ts, rx_crc_errors=5),
            f.telemetry_sample("leaf-t1", "Ethernet1/1", ts + timedelta(seconds=1), link_down_events=2),
        ],
    ).json()
    assert (r["stored"], r["rejected"]) == (1, 1)
    assert r["errors"][0]["index"] == 0 and r["errors"][0]["code"] == "no_data"
    assert "no reading" in r["errors"][0]["message"]
    assert TelemetrySample.objects.get().link_down_events == 2
