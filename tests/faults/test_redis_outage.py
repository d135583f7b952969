"""Redis (cache and broker, one private redis-server) stops while technicians use the site and a
collector posts telemetry; then it comes back.

During the outage: the pages answer (cache errors are ignored), a fault is recorded, telemetry
is accepted into the database (or refused with 503 + Retry-After, which the collector retries),
and the work that needs a worker (the rollup of the posted batches, the retest sweep an engineer
asked for) is kept in the database outbox. After it: one beat tick of the outbox flush, and a
real worker runs that work: the batches are rolled up, the reminders go out once each.

    rack R-RO (team Ops: mailbox ops@, tina)      rack R-RX (no team)
      J-RO-0 tested 84 days ago: due soon           J-RX-0: the cable tina reports faulty
    leaf-ro: two ports posting telemetry
"""

import time
from collections import Counter
from datetime import timedelta

import orjson
import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.choices import CableStatus, TokenKind
from inventory.models import (
    Cable,
    FieldNote,
    OutboxMessage,
    PortRollup,
    RetestSweepRun,
    TelemetryIngestBatch,
    TelemetrySample,
)
from inventory.tasks import outbox_flush_task
from tests import factories as f
from tests.workers import wait_for

pytestmark = [pytest.mark.fault, pytest.mark.worker]

PASSWORD = "pw-for-tests-1"  # tests/factories.py


@pytest.fixture
def site(transactional_db):
    now = timezone.now()
    tina = f.person("tina", role="technician")
    ops = f.team("Ops", email="ops@example.net", members=[tina])
    rack = f.RackFactory(name="R-RO")
    rack.team = ops
    rack.save()
    hall = rack.row.room.site  # tina reports faults here: her team's site (a fault is site-scoped)
    hall.team = ops
    hall.save()
    _, a = f.twin_port_device("gpu-ro", rack=rack, u=2, role="gpu_node", cages=1)
    _, b = f.twin_port_device("leaf-rx", rack=rack, u=40, cages=1)
    due = f.jumper("J-RO-0", a[0], b[0], install_date=(now - timedelta(days=100)).date())
    f.record_test(due, at=now - timedelta(days=84))
    other = f.RackFactory(name="R-RX")
    _, c = f.twin_port_device("gpu-rx", rack=other, u=2, role="gpu_node", cages=1)
    _, d = f.twin_port_device("leaf-rx2", rack=other, u=40, cages=1)
    broken = f.jumper("J-RX-0", c[0], d[0])
    broken.status = CableStatus.IN_PRODUCTION
    broken.save()
    _, telemetry_ports = f.twin_port_device("leaf-ro", cages=1, with_modules=False)
    engineer = f.person("erin", role="engineer")
    collector = f.api_token_client(f.UserFactory(username="collector", role="collector"), TokenKind.INGEST)
    return {
        "tina": tina,
        "engineer": engineer,
        "collector": collector,
        "ports": telemetry_ports,
        "start": (now - timedelta(minutes=6)).replace(second=0, microsecond=0),
    }


def post_batch(client, samples: list[dict], *, attempts: int = 10) -> dict:
    """What a collector does: POST, and on 503 wait Retry-After (capped at 1 s here) and retry."""
    body = orjson.dumps({"samples": samples})
    for _ in range(attempts):
        r = client.post("/api/telemetry/", data=body, content_type="application/json")
        if r.status_code != 503:
            assert r.status_code == 200, r.content
            return r.json()
        assert int(r["Retry-After"]) > 0
        time.sleep(min(1.0, int(r["Retry-After"])))
    raise AssertionError("telemetry refused with 503 on every attempt")


def batch(site, minute: int) -> list[dict]:
    at = site["start"] + timedelta(minutes=minute)
    return [
        f.telemetry_sample(
            "leaf-ro", p.name, at + timedelta(seconds=10 * i), fec_corrected_bits=(minute * 6 + i) * 1000
        )
        for p in site["ports"]
        for i in range(6)
    ]


def test_pages_and_telemetry_survive_a_redis_outage_and_queued_work_runs_after_it(
    site, smtp_sink, fault_workers, on_private_redis
):
    worker = fault_workers(smtp_sink.env)
    on_private_redis.stop()

    # A technician logs in, opens pages, reports a fault.
    tina = Client()
    r = tina.post("/login/", {"username": "tina", "password": PASSWORD})
    assert r.status_code == 302, r.content[:500]
    assert tina.get("/").status_code == 200
    page = tina.get("/c/J-RX-0")
    assert page.status_code == 200 and b"J-RX-0" in page.content
    r = tina.post("/c/J-RX-0/fault", {"seen": "link light off", "status": CableStatus.FAULTY})
    assert r.status_code == 302
    assert Cable.objects.get(label="J-RX-0").status == CableStatus.FAULTY
    assert FieldNote.objects.filter(cable__label="J-RX-0", text="link light off").exists()
    assert b"Fault recorded" in tina.get("/c/J-RX-0").content

    # An engineer asks for a retest sweep: it needs a worker, so it waits in the outbox.
    erin = Client()
    erin.force_login(site["engineer"])
    r = erin.post("/retests/sweep/")
    assert r.status_code == 302

    # The collector posts three batches; each is accepted (stored) or retried after a 503.
    results = [post_batch(site["collector"], batch(site, m)) for m in range(3)]
    assert [x["stored"] for x in results] == [12, 12, 12]
    assert TelemetrySample.objects.filter(port__in=site["ports"]).count() == 36
    # each batch queued its two ports for rollup (in a row per rollup shard)
    queued = sorted(p for ids in TelemetryIngestBatch.objects.values_list("port_ids", flat=True) for p in ids)
    assert queued == sorted(p.pk for p in site["ports"] for _ in range(3))

    kept = Counter(OutboxMessage.objects.filter(sent_at__isnull=True).values_list("task_name", flat=True))
    assert kept["inventory.retests_sweep"] == 1
    assert kept["inventory.telemetry_rollup"] >= 1
    assert not PortRollup.objects.exists() and not RetestSweepRun.objects.exists()
    # Only the fault notice went out (SMTP needs no Redis): to the team of the site tina reported in.
    [fault_notice] = smtp_sink.messages()
    assert "J-RX-0" in fault_notice.subject and set(fault_notice.rcpt_tos) == {
        "ops@example.net",
        "tina@example.net",
    }
    smtp_sink.clear()

    # Redis is back (empty: it keeps nothing on disk). Beat's next outbox tick drains the outbox.
    on_private_redis.start()
    outbox_flush_task.apply_async(_outbox=False)  # as beat sends it; fails loudly if Redis is not back
    wait_for(lambda: not OutboxMessage.objects.filter(sent_at__isnull=True).exists(), timeout=30)
    wait_for(lambda: not TelemetryIngestBatch.objects.exists(), timeout=30)
    wait_for(lambda: len(smtp_sink.messages()) >= 2, timeout=30)
    worker.stop()

    log = worker.log.read_text()
    assert log.count("inventory.telemetry_rollup[") == 2  # received + succeeded: sent once
    assert PortRollup.objects.filter(port__in=site["ports"]).count() >= 2 * 2
    assert RetestSweepRun.objects.get().finished_at is not None
    assert Counter(m.to for m in smtp_sink.messages()) == {"ops@example.net": 1, "tina@example.net": 1}
    assert all("J-RO-0" in m.text for m in smtp_sink.messages())
