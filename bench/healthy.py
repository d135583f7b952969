"""The healthy hour at scale: generated healthy telemetry for every link of the seeded demo
through the real ingest path, the rollup and the rule evaluation; a healthy fleet raises nothing.

The generator is the tests' independent one (``tests/inventory/services/alerts/healthy_telemetry``:
per-lane DOM offsets within +-3 dB, reading noise, counter resets, retries, late samples, healthy
tail codewords, occasional pause frames). Every ``CADENCE`` minutes the collectors' batch is
posted to ``POST /api/telemetry/`` (the API view, decoding and the ingest service; in-process, no
web server), the rollup runs until its queue is empty and the rule task evaluates; at the end
the held-back samples are flushed and evaluated once more.

Reported: samples stored, ingest, rollup and rule time, and what the hour caused: alerts
opened, mails and cable status changes (target 0 each; the seed's own demo incidents, opened
before the hour, are not counted). ``BENCH_HEALTHY_LINKS`` (default: every active link) and
``BENCH_HEALTHY_MINUTES`` (default 60) shrink the run when the machine is too slow; the figures
say which size ran.
"""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta

CADENCE = 3  # minutes between posts / rollups / rule runs (every rule window is >= 5 min)


def run(report) -> None:
    from django.utils import timezone

    from inventory.core.choices import TokenKind
    from inventory.models import Alert, AlertNotification, Cable, Link
    from inventory.services import alerts as svc
    from inventory.services.telemetry.rollup import telemetry_rollup
    from tests import factories as f
    from tests.inventory.services.alerts.healthy_telemetry import HealthyFleet
    from tests.inventory.services.alerts.test_healthy_hour import fleet_ports

    links_wanted = int(os.environ.get("BENCH_HEALTHY_LINKS", "0")) or None
    minutes = int(os.environ.get("BENCH_HEALTHY_MINUTES", "60"))
    ports = fleet_ports()  # both ends of every active link, as their collectors report them
    total_links = Link.objects.filter(active=True).count()
    if links_wanted:
        ports = ports[: 2 * links_wanted]
    report(
        f"healthy: links replayed (of {total_links:,} active)", len(ports) // 2, "links", f"{total_links:,}"
    )
    report("healthy: minutes of telemetry", minutes, "min", "60")

    alerts_before = set(Alert.objects.values_list("pk", flat=True))  # the demo's own incidents
    mail_before = AlertNotification.objects.count()
    status_before = dict(Cable.objects.values_list("pk", "status"))
    user = f.UserFactory(username="bench-healthy-collector", role="collector")
    client = f.api_token_client(user, TokenKind.INGEST)
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=minutes + 1)
    fleet = HealthyFleet(ports, start=start, seed=11)

    timing = {"generate": 0.0, "ingest": 0.0, "rollup": 0.0, "rules": 0.0}
    stored = 0
    opened = 0

    def post(samples) -> None:
        nonlocal stored
        t0 = time.perf_counter()
        for k in range(0, len(samples), 5000):
            r = client.post(
                "/api/telemetry/",
                data=json.dumps({"samples": samples[k : k + 5000]}),
                content_type="application/json",
            )
            if r.status_code != 200:
                raise RuntimeError(f"ingest refused a healthy batch: {r.status_code} {r.content[:300]!r}")
            stored += r.json().get("stored", 0)
        timing["ingest"] += time.perf_counter() - t0

    def roll_and_judge(now) -> None:
        nonlocal opened
        t0 = time.perf_counter()
        while telemetry_rollup(now=now).remaining:
            pass
        timing["rollup"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        opened += len(svc.alerts_evaluate(now=now).opened)
        timing["rules"] += time.perf_counter() - t0

    for minute in range(CADENCE, minutes + 1, CADENCE):
        t0 = time.perf_counter()
        batch = fleet.samples_until(minute * 60.0)
        timing["generate"] += time.perf_counter() - t0
        post(batch)
        roll_and_judge(start + timedelta(minutes=minute))
    post(fleet.flush())
    roll_and_judge(start + timedelta(minutes=minutes + 1))

    report("healthy: samples stored", stored, "samples", "")
    report("healthy: generating them (the test generator, not the product)", timing["generate"], "s", "")
    report("healthy: ingest (POST /api/telemetry/, in-process)", timing["ingest"], "s", "")
    report("healthy: ingest rate", stored / max(timing["ingest"], 1e-9), "samples/s", "")
    report("healthy: rollup, every run of the hour", timing["rollup"], "s", "")
    report("healthy: rule evaluation, every run of the hour", timing["rules"], "s", "")
    new_alerts = Alert.objects.exclude(pk__in=alerts_before).count()
    report("healthy: alerts raised by the hour", max(new_alerts, opened), "alerts", "0")
    report("healthy: mails sent for the hour", AlertNotification.objects.count() - mail_before, "mails", "0")
    changed = sum(1 for pk, st in Cable.objects.values_list("pk", "status") if status_before.get(pk) != st)
    report("healthy: cable status changes caused by the hour", changed, "cables", "0")
