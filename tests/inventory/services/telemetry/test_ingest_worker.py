"""Ingest through the endpoint, rollup by a real Celery worker (Redis when REDIS_URL is set)."""

from datetime import timedelta

import orjson
import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import PortRollup, TelemetryIngestBatch
from tests import factories as f
from tests.workers import wait_for

pytestmark = pytest.mark.worker


def test_posted_batch_is_rolled_up_by_the_worker(celery_worker_proc, user_with_role):
    _, ports = f.twin_port_device("leaf-wk", cages=1, with_modules=False)
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    start = (timezone.now() - timedelta(minutes=5)).replace(second=0, microsecond=0)
    samples = [
        f.telemetry_sample("leaf-wk", p.name, start + timedelta(seconds=10 * i), fec_corrected_bits=i * 1000)
        for p in ports
        for i in range(12)
    ]
    r = client.post(
        "/api/telemetry/", data=orjson.dumps({"samples": samples}), content_type="application/json"
    )
    assert r.status_code == 200 and r.json()["stored"] == 24
    wait_for(lambda: not TelemetryIngestBatch.objects.exists(), timeout=60)
    rows = PortRollup.objects.filter(port__in=ports).order_by("port_id", "bucket")
    assert [(x.port_id, x.fec_corrected_bits) for x in rows] == [
        (ports[0].pk, 5000),
        (ports[0].pk, 6000),
        (ports[1].pk, 5000),
        (ports[1].pk, 6000),
    ]
