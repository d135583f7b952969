"""A training job in the demo hall with a slow all-reduce caused by one cable, so the pages show
the whole chain: the job, its slow ring, the suspect cable with both ends and modules, the FEC
evidence on it and whether the link is safe to drain.

Deterministic by seed; written through the services the API calls, in the order a site's
collectors deliver it: ``job_register`` (what a Slurm prolog posts to ``/api/jobs/``), NCCL
Inspector objects read by the same parser as ``/api/collectives/?format=inspector`` into
``collective_records_ingest``, the rail links' telemetry through ``telemetry_ingest`` and
``telemetry_rollup``, then ``collectives_evaluate`` at two of the minutes beat runs it.

The job: the first ``NODES`` GPU nodes x 8 GPUs, data parallel. On the rail-optimised fabric the
data-parallel communicator of local GPU k ("dp-rail<k+1>", one rank per node) rings through NIC
``eth<k>`` of every node and rail leaf ``r<k+1>``: a 256 MiB all-reduce every 20 s, about 2.6 ms.
One jumper of one rail (a rail whose links carry no other demo alert, fault or telemetry) is bent:
from ``FEC_FROM`` before the demo's now its receivers' pre-FEC BER climbs from ~1e-9 to ~5e-5 with
a few uncorrectable codewords a minute; from ``SLOW_FROM`` every other operation of that rail's
ring is 6-12x slower (RDMA retransmits), the rest 1.3x. The rule pages once the ring has been slow
for its five minutes. The job is still running, so draining the suspect link is refused.

The ring's other links report healthy counters every minute of the job, so the suspect stands
alone among candidates that all report (the rule's "how sure" counts them); the suspect's link
reported the day before too, so its cable page draws a healthy day and the climb. Small on
purpose (a few thousand records, under a thousand samples): the seed stays fast at any size.
A demo smaller than ``NODES`` nodes has no job.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Q

from inventory.conf import app_settings
from inventory.core.choices import AlertState, CableStatus, DeviceRole
from inventory.core.collectives.formats import Parsed, inspector_op
from inventory.core.telemetry.decode import decode_objects
from inventory.models import Alert, Device, JobRank, Link, LinkSegment, PortRollup
from inventory.services.collectives import (
    RankSpec,
    collective_records_ingest,
    collectives_evaluate,
    job_register,
)
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import telemetry_rollup

NODES = 8
GPUS_PER_NODE = 8
JOB_FOR = timedelta(minutes=25)  # the job started this long before the demo's now
FEC_FROM = timedelta(minutes=20)  # the jumper's errors begin
SLOW_FROM = timedelta(minutes=12)  # its ring turns slow (the rule pages five minutes later)
OP_EVERY_S = 20
OP_US = 2600.0  # a 256 MiB all-reduce at about 180 GB/s bus bandwidth
OP_BYTES = 256 << 20
LANES, LANE_BPS = 4, 106.25e9
FAULT_BER = 5e-5
DAY, DAY_STEP = timedelta(hours=24), timedelta(minutes=10)  # the suspect's day before the job


@dataclass(frozen=True)
class RailPort:
    device: str
    port: str
    link_id: int
    faulty: bool  # an end of the bent jumper's link


def _now(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


def _ranks(hosts: list[str]) -> list[RankSpec]:
    return [
        RankSpec(rank=n * GPUS_PER_NODE + g, host=h, local_rank=g, gpu=g, pid=30_000 + 100 * n + g)
        for n, h in enumerate(hosts)
        for g in range(GPUS_PER_NODE)
    ]


@dataclass(frozen=True)
class RailLink:
    link_id: int
    ends: tuple[tuple[int, str, str], tuple[int, str, str]]  # (port id, device, port) x 2


def _rail_links(job_id: int) -> dict[int, list[RailLink]]:
    """Per rail, the links of the job's NIC ports: one set-based read."""
    rails = dict(JobRank.objects.filter(job_id=job_id, port__isnull=False).values_list("port_id", "rail"))
    out: dict[int, list[RailLink]] = {}
    for lid, a, a_dev, a_port, b, b_dev, b_port in (
        Link.objects.filter(Q(a_port_id__in=list(rails)) | Q(b_port_id__in=list(rails)), active=True)
        .order_by("pk")
        .values_list(
            "id",
            "a_port_id",
            "a_port__device__name",
            "a_port__name",
            "b_port_id",
            "b_port__device__name",
            "b_port__name",
        )
    ):
        rail = rails[a] if a in rails else rails[b]
        out.setdefault(rail, []).append(RailLink(lid, ((a, a_dev, a_port), (b, b_dev, b_port))))
    return out


def _clean_rail(rails: dict[int, list[RailLink]], rng: random.Random) -> int | None:
    """A rail (in seeded order) whose links carry no open alert, no cable out of production and no
    telemetry yet: the fault must be the only thing on the ring, and its evidence its own."""
    lids = [r.link_id for links in rails.values() for r in links]
    ports = [p for links in rails.values() for r in links for p, _d, _n in r.ends]
    alerted = set(
        Alert.objects.filter(state=AlertState.OPEN, link_id__in=lids).values_list("link_id", flat=True)
    )
    unwell = set(
        LinkSegment.objects.filter(link_id__in=lids)
        .exclude(cable__status=CableStatus.IN_PRODUCTION)
        .values_list("link_id", flat=True)
    )
    reported = set(PortRollup.objects.filter(port_id__in=ports).values_list("port_id", flat=True).distinct())
    order = sorted(rails)
    rng.shuffle(order)
    for rail in order:
        links = rails[rail]
        if len(links) != NODES or any(r.link_id in alerted or r.link_id in unwell for r in links):
            continue
        if not any(p in reported for r in links for p, _d, _n in r.ends):
            return rail
    return None


def _inspector_objects(
    *, start: datetime, now: datetime, hosts: list[str], slow_rail: int, rng: random.Random
) -> list[dict]:
    """What the Inspector plugin writes for each rank of each ring, every operation (as it does
    with ``NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS`` set)."""
    out = []
    slow_from = (now - SLOW_FROM - start).total_seconds()
    t = OP_EVERY_S
    while start + timedelta(seconds=t) <= now:
        seq = t // OP_EVERY_S
        for g in range(GPUS_PER_NODE):
            slow = 1.0
            if g + 1 == slow_rail and t >= slow_from:
                slow = rng.uniform(6, 12) if seq % 2 == 0 else 1.3  # RDMA retransmits
            elif rng.random() > 0.985:
                slow = rng.uniform(1.2, 1.7)  # a straggler: a late rank, a host hiccup
            op_us = OP_US * slow * math.exp(rng.gauss(0, 0.05))
            end_us = int((start.timestamp() + t + rng.uniform(0, 0.3)) * 1e6)
            for n, host in enumerate(hosts):
                mine = op_us * (1 - abs(rng.gauss(0, 0.02)))  # each rank waits on the slowest
                out.append(
                    {
                        "header": {
                            "id": f"0x{0xD0 + g:x}5eed",
                            "comm_name": f"dp-rail{g + 1}",
                            "rank": n,
                            "n_ranks": len(hosts),
                            "nnodes": len(hosts),
                        },
                        "metadata": {
                            "inspector_output_format_version": "v4.0",
                            "rec_mechanism": "nccl_profiler_interface",
                            "dump_timestamp_us": end_us,
                            "hostname": host,
                            "pid": 30_000 + 100 * n + g,
                        },
                        "coll_perf": {
                            "coll": "AllReduce",
                            "coll_sn": seq,
                            "coll_msg_size_bytes": OP_BYTES,
                            "coll_exec_time_us": int(mine),
                            "coll_timing_source": "kernel_gpu",
                            "coll_busbw_gbs": round(
                                OP_BYTES / mine / 1e3 * 2 * (len(hosts) - 1) / len(hosts), 3
                            ),
                        },
                    }
                )
        t += OP_EVERY_S
    return out


def _samples(*, ports: list[RailPort], now: datetime, rng: random.Random) -> list[dict]:
    """Each port's counters every minute while the job runs (the bent jumper's link every 10
    minutes for the day before too: the cable page draws its day). Pre-FEC BER ~1e-9..1e-8; on
    the bent jumper's two receivers a climb to ``FAULT_BER`` from ``FEC_FROM``, with
    uncorrectable codewords and 2.5 dB less light."""
    during = []
    t = now - JOB_FOR
    while t <= now:
        during.append(t)
        t += timedelta(minutes=1)
    day = [now - JOB_FOR - DAY_STEP * k for k in range(int(DAY / DAY_STEP), 0, -1)]
    fec_from = now - FEC_FROM
    out = []
    for p in ports:
        ber0 = 10 ** rng.uniform(-9, -8)
        rx0 = [round(rng.uniform(-3.5, -1.0), 2) for _ in range(LANES)]
        cw, bits, uncorr = rng.randrange(1 << 30), rng.randrange(1 << 30), 0
        times = day + during if p.faulty else during
        prev = times[0]
        for t in times:
            ber, drop = ber0 * rng.uniform(0.8, 1.2), 0.0
            if p.faulty and t > fec_from:
                # geometric over ten minutes from its own level to the fault's, held since
                share = min(1.0, (t - fec_from) / timedelta(minutes=10))
                ber = math.exp(math.log(ber0) + share * (math.log(FAULT_BER) - math.log(ber0)))
                ber *= rng.uniform(0.8, 1.2)
                drop = 2.5 * share
                uncorr += rng.choice((0, 1, 2)) if share >= 1 else 0
            n = int(ber * (t - prev).total_seconds() * LANES * LANE_BPS)
            bits += n
            cw += max(1, n * 10 // 12)  # a corrected codeword holds 1-2 bit errors
            prev = t
            out.append(
                {
                    "device": p.device,
                    "port": p.port,
                    "ts": t.isoformat(),
                    "fec_corrected_codewords": cw,
                    "fec_corrected_bits": bits,
                    "fec_uncorrectable_codewords": uncorr,
                    "rx_power_dbm": [round(v - drop + rng.gauss(0, 0.05), 2) for v in rx0],
                }
            )
    return out


def demo_seed_jobs(*, site, seed: int, now: datetime) -> dict[str, int]:
    """Register the job, deliver its timings and its rail's telemetry, run the rule; the counts."""
    rng = random.Random(seed * 6151 + 29)
    now = _now(now)
    hosts = list(
        Device.objects.filter(role=DeviceRole.GPU_NODE, rack__row__room__site=site)
        .order_by("name")
        .values_list("name", flat=True)[:NODES]
    )
    if len(hosts) < NODES:
        return {"jobs": 0, "collective_records": 0, "job_samples": 0}
    start = now - JOB_FOR
    job, _created = job_register(
        job_id=str(418_200 + seed), name="llama-pretrain", ranks=_ranks(hosts), started_at=start, now=start
    )
    rails = _rail_links(job.pk)
    rail = _clean_rail(rails, rng)
    if rail is None:  # every rail already shows something: a fault there would not stand alone
        return {"jobs": 1, "collective_records": 0, "job_samples": 0}
    bad = rng.choice(rails[rail]).link_id
    ports = [
        RailPort(device=dev, port=name, link_id=r.link_id, faulty=r.link_id == bad)
        for r in rails[rail]
        for _p, dev, name in r.ends
    ]
    parsed = Parsed()
    objs = _inspector_objects(start=start, now=now, hosts=hosts, slow_rail=rail, rng=rng)
    parsed.received = len(objs)
    parsed.ops = [(i, inspector_op(o)) for i, o in enumerate(objs)]
    records = collective_records_ingest(job_id=job.job_id, parsed=parsed, now=now)
    decoded = decode_objects(
        _samples(ports=ports, now=now, rng=rng),
        now=now,
        max_future=timedelta(seconds=app_settings.telemetry_max_future_seconds),
        max_age=timedelta(days=app_settings.telemetry_raw_retention_days),
    )
    samples = telemetry_ingest(decoded=decoded, now=now)
    while telemetry_rollup(now=now).remaining:
        pass
    # as beat ran the rule: when the ring had been slow its five minutes (the alert opens), and
    # at the demo's now (it is still slow); the minutes between add nothing a page shows
    for t in (now - SLOW_FROM + timedelta(minutes=5), now):
        collectives_evaluate(now=t)
    return {"jobs": 1, "collective_records": records.stored, "job_samples": samples.stored}
