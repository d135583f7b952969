"""Collective timings: ingest rate end to end, and spike-to-alert time.

A training job over the seeded cluster's GPU nodes (all of them up to ``BENCH_COLLECTIVE_NODES``,
512 by default: 4,096 ranks) is registered through ``POST /api/jobs/`` and delivered minute by
minute as its collectors deliver it, by the tests' own generator
(``tests/inventory/collectives/cluster_jobs.py``): Inspector JSON records, one per operation
per communicator per rank (8 rail rings of one rank per node every 10 s, a world all-reduce
every 30 s), and the telemetry of both ends of every rail link of the job. At minute
``FAULT_MIN`` one node's rail-4 jumper goes bad (FEC up, light down, the rings through it 6-12x
slower half of the time).

Each minute, as beat and the workers do it: the records go to a real gunicorn (2 sync workers,
loopback) through ``POST /api/collectives/?format=inspector`` in batches of 5,000 from two
client threads (bodies pre-built: the client's JSON encoding is not timed), the telemetry
through ``POST /api/telemetry/`` (not in the rate), the rollup works its queue empty in this
process, then ``collectives_evaluate`` runs.

Figures:
* records ingested per second, end to end (every minute's records over the time their POSTs
  took); target >= 20,000 records/s.
* spike to alert: for the minute whose records complete the spike (the first minute that opens
  the ``tail_latency_spike`` alert), the time to store that minute's records + roll up its
  telemetry + the evaluation that opens the alert with its suspects, plus the wait for the next
  evaluation (at most ``CABLETRACK_ALERT_EVERY_S``: beat runs the rule on that period), in
  rollup buckets; target < 2 buckets. Whether the alert's top suspect is the faulty cable is
  reported beside it (1: yes).

The plant is what the runner seeded (``make bench BENCH_GPUS=131072 BENCH_ARGS=collectives``
for the large cluster: the evaluation then reads a 131,072-GPU plant; the job itself stays at
``BENCH_COLLECTIVE_NODES`` nodes unless that is raised too).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta

import orjson

from bench.common import Http, WebServer, make_token, post_all

BATCH = 5_000
FAULT_MIN = 8  # the fault starts here; the rule needs 20 operations of baseline first
MINUTES = 20  # the spike holds its 5 minutes from about minute 9: an alert by minute 15 or so
TELEMETRY_FROM = 2
RAIL = 4


def _hosts(limit: int) -> list[str]:
    from inventory.core.choices import DeviceRole
    from inventory.models import Device

    return list(
        Device.objects.filter(role=DeviceRole.GPU_NODE, name__startswith="gpu-")
        .order_by("name")
        .values_list("name", flat=True)[:limit]
    )


def _rail_ports(hosts: list[str]) -> list[tuple[str, str, str, int]]:
    """Both ends of every rail link of ``hosts``: (device, port, far device, rail)."""
    from django.db.models import Q

    from inventory.models import Link

    names = set(hosts)
    out = []
    for a_dev, a_port, b_dev, b_port in Link.objects.filter(
        Q(a_port__device__name__in=hosts) | Q(b_port__device__name__in=hosts), active=True, link_class="rail"
    ).values_list("a_port__device__name", "a_port__name", "b_port__device__name", "b_port__name"):
        nic = a_port if a_dev in names else b_port
        rail = int(nic[3:]) + 1
        out += [(a_dev, a_port, b_dev, rail), (b_dev, b_port, a_dev, rail)]
    return out


def run(report) -> None:
    from django.db.models import Q

    from inventory.conf import app_settings
    from inventory.core.choices import AlertRule, AlertState
    from inventory.models import Alert, Link, LinkSegment
    from inventory.services.collectives import collectives_evaluate
    from inventory.services.telemetry.rollup import telemetry_rollup
    from tests.inventory.collectives.cluster_jobs import Episode, Job, inspector_body

    hosts = _hosts(int(os.environ.get("BENCH_COLLECTIVE_NODES", "512")))
    if len(hosts) < 2:
        print("  collectives: fewer than 2 GPU nodes seeded, nothing to run", flush=True)
        return
    ports = _rail_ports(hosts)
    faulty = len(hosts) // 2
    report("collectives bench: GPUs in the job (ranks)", len(hosts) * 8, "GPUs")
    report("collectives bench: load average (1 min) at start", os.getloadavg()[0], "")
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=MINUTES + 1)
    job = Job(
        job_id="bench-collectives",
        hosts=hosts,
        start=start,
        seed=11,
        episodes=[Episode("cable", rail=RAIL, start_s=FAULT_MIN * 60.0, node=faulty)],
    )
    job._tel_t = TELEMETRY_FROM * 60.0
    collector = make_token("bench-collector", role="collector", kind="ingest")
    path = f"/api/collectives/?format=inspector&job={job.job_id}"
    bucket = float(app_settings.telemetry_rollup_seconds)
    with WebServer(workers=2) as web:
        status, data, _ = Http(web.port, collector).request(
            "POST", "/api/jobs/", orjson.dumps(job.registration()), {"Content-Type": "application/json"}
        )
        if status != 201:
            raise RuntimeError(f"job registration: {status} {data[:300]}")
        ingest_s, stored = 0.0, 0
        opened_at = None
        opened_ids: list[int] = []
        for minute in range(1, MINUTES + 1):
            now = start + timedelta(minutes=minute)
            objs = job.records_until(minute * 60.0)
            bodies = [inspector_body(objs[k : k + BATCH]) for k in range(0, len(objs), BATCH)]
            took, n = post_all(web.port, collector, path, bodies, whole=True)
            if n != len(objs):
                raise RuntimeError(f"minute {minute}: stored {n} of {len(objs)} records")
            ingest_s += took
            stored += n
            rollup_s = 0.0
            if minute > TELEMETRY_FROM:
                samples = job.telemetry_until(minute * 60.0, ports)
                tel = [
                    orjson.dumps({"samples": samples[k : k + BATCH]}) for k in range(0, len(samples), BATCH)
                ]
                post_all(web.port, collector, "/api/telemetry/", tel, whole=True)
                t = time.perf_counter()
                while telemetry_rollup(now=now).remaining:
                    pass
                rollup_s = time.perf_counter() - t
            t = time.perf_counter()
            r = collectives_evaluate(now=now)
            evaluate_s = time.perf_counter() - t
            print(
                f"  minute {minute}: {n:,} records in {took:.2f} s, rollup {rollup_s:.2f} s, "
                f"evaluation {evaluate_s:.2f} s, {len(r.alerts.opened)} alert(s) opened",
                flush=True,
            )
            if r.alerts.opened:
                opened_at = (minute, took, rollup_s, evaluate_s)
                opened_ids = list(r.alerts.opened)
                break  # the figure is taken: the minutes after it would only add ingest
        report(
            f"collective records ingested end to end (Inspector JSON, {BATCH:,}/batch, {stored:,} records)",
            stored / ingest_s,
            "records/s",
            ">= 20,000",
        )
    if opened_at is None:
        report("spike to alert: no tail_latency_spike alert opened", 0, "", "an alert")
        return
    minute, took, rollup_s, evaluate_s = opened_at
    report("spike to alert: minute the alert opened (fault from minute 8)", minute, "min")
    report("spike to alert: that minute's records stored", took, "s")
    report("spike to alert: its telemetry rolled up", rollup_s, "s")
    report("spike to alert: the evaluation that opened it, with suspects", evaluate_s, "s")
    worst = took + rollup_s + evaluate_s + float(app_settings.alert_every_s)
    report(
        f"spike to alert at {len(hosts) * 8:,} GPUs in the job (stored + rollup + evaluation + period)",
        worst / bucket,
        "buckets",
        "< 2",
    )
    nic = (hosts[faulty], f"eth{RAIL - 1}")
    link = Link.objects.get(
        Q(a_port__device__name=nic[0], a_port__name=nic[1])
        | Q(b_port__device__name=nic[0], b_port__name=nic[1]),
        active=True,
    )
    cable_id = (
        LinkSegment.objects.filter(link=link).order_by("seq").values_list("cable_id", flat=True).first()
    )
    spike = (  # this job's alert (the seeded demo job has one of its own, opened earlier)
        Alert.objects.filter(
            pk__in=opened_ids, rule=AlertRule.TAIL_LATENCY_SPIKE, state=AlertState.OPEN, cable__isnull=False
        )
        .order_by("opened_at")
        .first()
    )
    report(
        "spike to alert: top suspect is the faulty cable",
        int(spike is not None and spike.cable_id == cable_id),
        "",
        "1",
    )
