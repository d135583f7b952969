"""Every poison input of issue 14 is posted to the real endpoints, next to what an older version
left in the database; then a normal telemetry batch and a normal test result. One cycle of the
background work on a real Celery worker (rollup, rules, retest sweep) rolls up, alerts on and
sweeps the normal ones, while the poison is refused at the door or set aside, visible in the
API, the page and ``/metrics``.

    [gpu-px eth0]--J-PX0--[leaf-px Ethernet1/1]   in production: the normal batch flaps it
    [gpu-px eth1]--J-PX1--[leaf-px Ethernet1/2]   its test was stored as 9999-12-31 (older version)
    [leaf-px Ethernet2/1]                           a raw sample stored at 'infinity' (a restore)
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import orjson
import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import CableStatus, DeviceRole, TokenKind
from inventory.models import (
    Alert,
    Cable,
    CableTest,
    PortRollup,
    RetestSweepRun,
    TelemetryIngestBatch,
    TelemetrySample,
)
from inventory.tasks import alerts_evaluate_task, retests_sweep_task, telemetry_rollup_task
from tests import factories as f
from tests.workers import wait_for

pytestmark = [pytest.mark.fault, pytest.mark.worker]
U64_MAX = (1 << 64) - 1
READINGS = [{"fibre": i, "wavelength_nm": 1310, "loss_db": 0.4} for i in range(1, 9)]


@pytest.fixture
def scene(transactional_db):
    now = timezone.now()
    _, gpu = f.twin_port_device("gpu-px", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-px", u=30)
    installed = (now - timedelta(days=30)).date()
    flapping = f.jumper("J-PX0", gpu[0], leaf[0], install_date=installed)
    flapping.status = CableStatus.IN_PRODUCTION
    flapping.save()
    legacy = f.jumper("J-PX1", gpu[1], leaf[1], install_date=installed)
    legacy.status = CableStatus.INSTALLED
    legacy.save()
    tech = APIClient()
    tech_user = f.UserFactory(username="tech-px", role="technician")
    f.field_crew(tech_user)  # a technician records tests in their team's sites
    tech.force_authenticate(tech_user)
    collector = f.api_token_client(f.UserFactory(username="collector-px", role="collector"), TokenKind.INGEST)
    return {"now": now, "leaf": leaf, "tech": tech, "collector": collector, "legacy": legacy}


def _post(client, samples):
    return client.post(
        "/api/telemetry/", data=orjson.dumps({"samples": samples}), content_type="application/json"
    )


def test_poison_is_set_aside_and_normal_work_is_rolled_up_alerted_and_swept_in_one_cycle(
    scene, fault_workers, settings
):
    worker = fault_workers()
    now, leaf, collector, tech = scene["now"], scene["leaf"], scene["collector"], scene["tech"]
    recent = (now - timedelta(minutes=4)).replace(second=0, microsecond=0)

    # --- every poison input, through the real endpoints -----------------------------------------
    def sample(port, ts, **kw):
        return f.telemetry_sample("leaf-px", port.name, ts, **kw)

    poison = [
        sample(leaf[3], "0001-01-01T00:00:00Z", fec_corrected_codewords=1),
        sample(leaf[3], "1970-01-01T00:00:00Z", fec_corrected_codewords=1),
        sample(leaf[3], -5, fec_corrected_codewords=1),
        sample(leaf[3], 0, fec_corrected_codewords=1),
        sample(leaf[3], "0001-01-01T00:00:00+14:00", fec_corrected_codewords=1),
        sample(leaf[3], recent, module_serial="MT\x00X"),
    ]
    r = _post(collector, poison)
    assert r.status_code == 200, r.content
    assert {e["code"] for e in r.json()["errors"]} == {"too_old", "invalid"}
    assert r.json()["rejected"] == len(poison) and not TelemetrySample.objects.exists()
    # a counter that jumps 0 -> 2**64-1 is legal: stored, and must not break the rollup
    wrap = [
        sample(leaf[3], recent + timedelta(seconds=10 * i), rx_bits=v) for i, v in enumerate((0, U64_MAX, 7))
    ]
    assert _post(collector, wrap).json()["stored"] == 3
    deep = b'{"samples": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}"
    assert collector.post("/api/telemetry/", data=deep, content_type="application/json").status_code == 400
    for when in ("9999-12-31", "0001-01-01"):
        r = tech.post(
            "/api/tests/", {"cable": "J-PX1", "readings": READINGS, "tested_at": when}, format="json"
        )
        assert r.status_code == 400, r.content
    assert not CableTest.objects.exists()

    # --- what an older version (or a restore) left behind ----------------------------------------
    table = connection.ops.quote_name(TelemetrySample._meta.db_table)
    with connection.cursor() as cur:
        cur.execute(f"INSERT INTO {table} (port_id, ts) VALUES (%s, %s)", [leaf[2].pk, "infinity"])  # noqa: S608 - test table name
    TelemetryIngestBatch.objects.create(received_at=now, min_ts=recent, max_ts=recent, port_ids=[leaf[2].pk])
    f.record_test(scene["legacy"], at=datetime(9999, 12, 31, tzinfo=UTC))

    # --- a normal batch (the link flaps) and a normal test result ---------------------------------
    normal = [sample(leaf[0], recent + timedelta(seconds=30 * i), link_down_events=i // 4) for i in range(8)]
    assert _post(collector, normal).json()["stored"] == 8
    r = tech.post("/api/tests/", {"cable": "J-PX0", "readings": READINGS}, format="json")
    assert r.status_code == 201, r.content

    # --- one cycle on the real worker: rollup, rules, sweep -----------------------------------------
    telemetry_rollup_task.apply_async()
    wait_for(lambda: not TelemetryIngestBatch.objects.filter(attempts=0).exists(), timeout=60)
    alerts_evaluate_task.apply_async()
    alert = wait_for(lambda: Alert.objects.filter(rule="link_flap").first(), timeout=60)
    retests_sweep_task.apply_async(kwargs={"full": True})
    run = wait_for(lambda: RetestSweepRun.objects.filter(finished_at__isnull=False).first(), timeout=60)
    worker.stop()

    # the normal ones: rolled up, alerted on, swept
    assert sum(PortRollup.objects.filter(port=leaf[0]).values_list("link_down_events", flat=True)) == 1
    assert "J-PX0" in list(alert.cables.values_list("label", flat=True))
    # 90 days from the day the test was recorded (not from "today" now: that flips at midnight UTC)
    recorded = timezone.localdate(
        CableTest.objects.filter(cable__label="J-PX0").latest("tested_at").tested_at
    )
    assert Cable.objects.get(label="J-PX0").retest_due == recorded + timedelta(days=90)
    assert PortRollup.objects.filter(port=leaf[3]).exists()  # the 64-bit jump rolled up too
    assert Cable.objects.get(label="J-PX1").retest_due == date.max  # the legacy test: no overflow
    assert run.set_aside == []

    # the poison: set aside with its reason, and visible
    (aside,) = TelemetryIngestBatch.objects.all()
    assert aside.port_ids == [leaf[2].pk] and aside.attempts == 1 and aside.last_error
    viewer = APIClient()
    viewer.force_authenticate(f.UserFactory(username="viewer-px", role="viewer"))
    state = viewer.get("/api/telemetry/pipeline/").json()["rollup"]
    assert state["set_aside_ports"] == 1 and state["set_aside_rows"][0]["ports"][0]["port"] == leaf[2].name
    page = Client()
    page.force_login(f.UserFactory(username="viewer-px2", role="viewer"))
    assert f"leaf-px:{leaf[2].name}" in page.get("/telemetry/pipeline/").content.decode()
    settings.CABLETRACK_METRICS_TOKEN = "scrape-px"
    metrics = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-px").content.decode()
    assert "cabletrack_telemetry_rollup_set_aside_ports 1.0" in metrics
    assert "cabletrack_telemetry_rollup_waiting_batches 0.0" in metrics
    log = worker.log.read_text()
    assert "Traceback" not in log, log[-3000:]
