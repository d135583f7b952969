"""Poison at the door of ``POST /api/telemetry/``: inputs that once stopped the pipeline for
everyone are refused item by item (or, for the body as a whole, with a clear 4xx), never a 500.

    [leaf-p Ethernet1/1] [Ethernet1/2] [Ethernet2/1] [Ethernet2/2]
"""

from __future__ import annotations

from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import TelemetrySample
from tests import factories as f

pytestmark = pytest.mark.django_db
URL = "/api/telemetry/"


@pytest.fixture
def leaf():
    return f.twin_port_device("leaf-p")[1]


@pytest.fixture
def collector(user_with_role):
    return f.api_token_client(user_with_role("collector"), TokenKind.INGEST)


def _post(client, samples):
    return client.post(URL, data=orjson.dumps({"samples": samples}), content_type="application/json")


def _now():
    return (timezone.now() - timedelta(minutes=1)).replace(microsecond=0)


@pytest.mark.parametrize(
    ("ts", "code"),
    [
        ("0001-01-01T00:00:00Z", "too_old"),
        ("0001-01-01T00:00:00+14:00", "invalid"),
        ("1970-01-01T00:00:00Z", "too_old"),
        (-5, "invalid"),
        (0, "invalid"),
        (1e300, "invalid"),
        ("9999-12-31T23:59:59-14:00", "invalid"),
    ],
)
def test_an_out_of_range_timestamp_is_refused_for_that_item_and_the_rest_stored(collector, leaf, ts, code):
    good = f.telemetry_sample("leaf-p", leaf[0].name, _now(), fec_corrected_codewords=1)
    bad = f.telemetry_sample("leaf-p", leaf[1].name, ts, fec_corrected_codewords=1)
    r = _post(collector, [good, bad])
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["stored"], body["rejected"]) == (1, 1)
    assert body["errors"][0]["index"] == 1 and body["errors"][0]["code"] == code
    assert list(TelemetrySample.objects.values_list("port_id", flat=True)) == [leaf[0].pk]


def test_a_sample_older_than_the_raw_retention_is_too_old_and_says_the_horizon(collector, leaf, settings):
    settings.CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS = 14
    old = timezone.now() - timedelta(days=15)
    r = _post(collector, [f.telemetry_sample("leaf-p", leaf[0].name, old, fec_corrected_codewords=1)])
    err = r.json()["errors"][0]
    assert err["code"] == "too_old" and "14 days" in err["message"]
    recent = timezone.now() - timedelta(days=13)
    r = _post(collector, [f.telemetry_sample("leaf-p", leaf[0].name, recent, fec_corrected_codewords=1)])
    assert r.json()["stored"] == 1


def test_a_nul_in_one_item_refuses_that_item_only(collector, leaf):
    ok = f.telemetry_sample("leaf-p", leaf[0].name, _now(), module_serial="MT-1")
    nul = f.telemetry_sample("leaf-p", leaf[1].name, _now(), module_serial="MT\x002")
    nul_port = f.telemetry_sample("leaf-p", "Ethernet1/2\x00", _now(), fec_corrected_codewords=1)
    r = _post(collector, [ok, nul, nul_port])
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["stored"] == 1
    assert {e["index"]: e["code"] for e in body["errors"]} == {1: "invalid", 2: "invalid"}
    assert "NUL" in body["errors"][0]["message"]


def test_a_nul_in_one_ndjson_line_refuses_that_line_only(collector, leaf):
    lines = [
        orjson.dumps(f.telemetry_sample("leaf-p", leaf[0].name, _now(), fec_corrected_codewords=1)),
        orjson.dumps(f.telemetry_sample("leaf-p", leaf[1].name, _now(), neighbor_port="x\x00")),
    ]
    r = collector.post(URL, data=b"\n".join(lines), content_type="application/x-ndjson")
    assert r.status_code == 200, r.content
    assert r.json()["stored"] == 1 and r.json()["errors"][0]["index"] == 1


def test_json_nested_100000_deep_is_a_400_not_a_recursion_error(collector, engineer_api):
    deep = b'{"samples": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
    r = collector.post(URL, data=deep, content_type="application/json")
    assert r.status_code == 400, r.content[:300]
    assert "nested" in r.json()["detail"]
    r = engineer_api.generic("POST", "/api/vendors/", b"[" * 100_000 + b"]" * 100_000, "application/json")
    assert r.status_code == 400, r.content[:300]


def test_a_json_body_over_the_item_cap_is_refused_before_its_items_are_decoded(collector, leaf, settings):
    settings.CABLETRACK_TELEMETRY_MAX_SAMPLES = 10
    item = f.telemetry_sample("leaf-p", leaf[0].name, _now(), fec_corrected_codewords=1)
    r = _post(collector, [item] * 11)
    assert r.status_code == 400
    assert "at most 10" in r.json()["detail"]
    r = collector.post(URL, data=b'{"samples": [' + b"0," * 20 + b"0]}", content_type="application/json")
    assert r.status_code == 400 and "at most 10" in r.json()["detail"]
    assert _post(collector, [item] * 10).status_code == 200
    assert not TelemetrySample.objects.exclude(port=leaf[0]).exists()


def test_prometheus_text_over_the_item_cap_is_refused(collector, leaf, settings):
    settings.CABLETRACK_TELEMETRY_MAX_SAMPLES = 10
    lines = [f'cabletrack_fec_corrected_codewords_total{{device="leaf-p",port="p{i}"}} 1' for i in range(50)]
    r = collector.post(URL, data="\n".join(lines).encode(), content_type="text/plain; version=0.0.4")
    assert r.status_code == 400, r.content
    assert "at most 10" in r.json()["detail"]
