"""Reads for collective timings: the operations the spike rule judges, each communicator's
links (rank -> GPU -> NIC port -> link), and the physical evidence on links in a window."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

import numpy as np
from django.db.models import Max, Min, Q, Sum

from inventory.core.choices import FEC_LIMITS, DeviceRole
from inventory.core.collectives.spike import LinkEvidence, Series
from inventory.models import (
    CollectiveRecord,
    Communicator,
    CommunicatorRank,
    JobRank,
    Link,
    PortBaseline,
    PortRollup,
)


def spike_series(*, now: datetime, lookback_s: float, active_s: float) -> list[Series]:
    """Every series (communicator, collective, message size) with an operation in the last
    ``active_s``, over the last ``lookback_s``: one value per operation, its slowest rank's time."""
    since = now - timedelta(seconds=lookback_s)

    active = (
        CollectiveRecord.objects.filter(ts__gt=now - timedelta(seconds=active_s), ts__lte=now)
        .values_list("communicator_id", flat=True)
        .distinct()
    )
    rows = (
        CollectiveRecord.objects.filter(communicator_id__in=list(active), ts__gt=since, ts__lte=now)
        .values("communicator_id", "coll", "msg_bytes", "seq")
        .annotate(t=Max("ts"), x=Max("exec_us"))
        .order_by("communicator_id", "coll", "msg_bytes", "t")
        .values_list("communicator_id", "coll", "msg_bytes", "t", "x")
    )
    groups: dict[tuple[int, str, int], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for comm, coll, size, t, x in rows:
        g = groups[(comm, coll, size)]
        g[0].append(t.timestamp())
        g[1].append(x)
    return [
        Series(comm_id=k[0], coll=k[1], msg_bytes=k[2], ts=np.asarray(ts), exec_us=np.asarray(xs))
        for k, (ts, xs) in groups.items()
    ]


UPLINK_CLASS = "leaf-spine"


def communicator_links(
    *, comm_ids: set[int]
) -> tuple[dict[int, set[int]], dict[int, Communicator], dict[int, set[int]]]:
    """Each communicator's links: its ranks' GPUs' NIC ports and the active links on them (a
    communicator with no ranks named, an nccl-tests run over the whole job, uses every rank);
    and the leaf-to-spine uplinks its traffic may take by ECMP when its ring crosses leaves.

    A ring crosses leaves when its hosts do not all reach the same leaves (hosts in two SUs, or
    ranks on another GPU, hence another rail, on some hosts): NCCL keeps a hop on one rail only
    when both hosts have a NIC on that rail's leaf. The leaves some hosts reach and others do not
    send and receive through the spines, over any of their uplinks (ECMP): all of those uplinks
    are the communicator's possible links. Four queries, whatever the job's size."""
    comms = {c.pk: c for c in Communicator.objects.filter(pk__in=comm_ids).select_related("job")}
    members: dict[int, set[int]] = defaultdict(set)
    for cid, port_id in CommunicatorRank.objects.filter(communicator_id__in=comm_ids).values_list(
        "communicator_id", "job_rank__port_id"
    ):
        if port_id is not None:
            members[cid].add(port_id)
    whole = {c.job_id for cid, c in comms.items() if cid not in members}
    by_job: dict[int, set[int]] = defaultdict(set)
    for job_id, port_id in JobRank.objects.filter(job_id__in=whole, port__isnull=False).values_list(
        "job_id", "port_id"
    ):
        by_job[job_id].add(port_id)
    ports = {cid: members.get(cid) or by_job.get(c.job_id, set()) for cid, c in comms.items()}
    all_ports = set().union(*ports.values()) if ports else set()
    link_of: dict[int, int] = {}
    # port -> (its device, the leaf at the far end of its link)
    reach: dict[int, tuple[int, int | None]] = {}
    for lid, a, b, a_dev, b_dev, a_role, b_role in Link.objects.filter(
        Q(a_port_id__in=all_ports) | Q(b_port_id__in=all_ports), active=True
    ).values_list(
        "id",
        "a_port_id",
        "b_port_id",
        "a_port__device_id",
        "b_port__device_id",
        "a_port__device__role",
        "b_port__device__role",
    ):
        link_of[a] = lid
        link_of[b] = lid
        reach[a] = (a_dev, b_dev if b_role == DeviceRole.LEAF else None)
        reach[b] = (b_dev, a_dev if a_role == DeviceRole.LEAF else None)
    crossing: dict[int, set[int]] = {}
    for cid, ps in ports.items():
        leaves_of: dict[int, set[int]] = defaultdict(set)
        for p in ps:
            host, leaf = reach.get(p, (None, None))
            if host is not None and leaf is not None:
                leaves_of[host].add(leaf)
        sets = list(leaves_of.values())
        if len(sets) > 1:
            crossed = set().union(*sets) - set.intersection(*sets)
            if crossed:
                crossing[cid] = crossed
    uplinks: dict[int, set[int]] = defaultdict(set)
    leaves = set().union(*crossing.values()) if crossing else set()
    if leaves:
        for lid, a_dev, b_dev in Link.objects.filter(
            Q(a_port__device_id__in=leaves) | Q(b_port__device_id__in=leaves),
            active=True,
            link_class=UPLINK_CLASS,
        ).values_list("id", "a_port__device_id", "b_port__device_id"):
            uplinks[a_dev].add(lid)
            uplinks[b_dev].add(lid)
    ecmp = {
        cid: set().union(*(uplinks.get(leaf, set()) for leaf in crossed)) for cid, crossed in crossing.items()
    }
    return {cid: {link_of[p] for p in ps if p in link_of} for cid, ps in ports.items()}, comms, ecmp


def link_evidence(
    *, link_ids: list[int], start: datetime, end: datetime
) -> tuple[dict[int, LinkEvidence], dict[int, float], dict[int, tuple[int, int]]]:
    """The physical and congestion evidence on each link between ``start`` and ``end`` (both
    ends, the worst of them), each link's FEC limit, and its port pair: three queries. A
    link that reported nothing in the window is absent (its absence lowers the confidence)."""
    links = {
        lid: (a, b, fec)
        for lid, a, b, fec in Link.objects.filter(pk__in=link_ids).values_list(
            "id", "a_port_id", "b_port_id", "fec"
        )
    }
    port_link = {p: lid for lid, (a, b, _f) in links.items() for p in (a, b)}
    per_port = (
        PortRollup.objects.filter(port_id__in=list(port_link), bucket__gte=start, bucket__lt=end)
        .values("port_id")
        .annotate(
            bits=Sum("fec_corrected_bits"),
            line=Sum("line_bits"),
            ber_max=Max("pre_fec_ber"),
            uncorr=Sum("fec_uncorrectable_cw"),
            down=Sum("link_down_events"),
            recov=Sum("link_error_recovery"),
            ptx=Sum("pfc_pause_tx"),
            prx=Sum("pfc_pause_rx"),
            covered=Sum("covered_s"),
            rx_low=Min("rx_power_min_any_dbm"),
        )
    )
    baselines = {
        b.port_id: b
        for b in PortBaseline.objects.filter(port_id__in=list(port_link)).only(
            "port_id", "pre_fec_ber", "rx_power_dbm"
        )
    }
    out: dict[int, LinkEvidence] = {}
    for row in per_port:
        lid = port_link[row["port_id"]]
        e = out.setdefault(lid, LinkEvidence())
        e.reporting = True
        ber = None
        if row["bits"] is not None and row["line"]:
            ber = row["bits"] / row["line"]
        elif row["ber_max"] is not None:
            ber = row["ber_max"]
        b = baselines.get(row["port_id"])
        if ber is not None and (e.pre_fec_ber is None or ber > e.pre_fec_ber):
            e.pre_fec_ber = ber
            e.ber_reference = b.pre_fec_ber if b is not None else None
        e.uncorrectable_cw += int(row["uncorr"] or 0)
        e.flaps += int(row["down"] or 0) + int(row["recov"] or 0)
        if row["covered"]:
            rate = max(row["ptx"] or 0, row["prx"] or 0) / row["covered"]
            e.pfc_pause_rate = max(e.pfc_pause_rate or 0.0, rate)
        low = row["rx_low"]
        lanes = [v for v in ((b.rx_power_dbm or []) if b is not None else []) if v is not None]
        if low is not None and lanes:
            drop = min(lanes) - low
            e.rx_drop_db = max(e.rx_drop_db or 0.0, drop)
    limits = {
        lid: (FEC_LIMITS.get(fec) or FEC_LIMITS["kp4"]).pre_fec_ber for lid, (_a, _b, fec) in links.items()
    }
    pairs = {lid: (a, b) for lid, (a, b, _f) in links.items()}
    return out, limits, pairs
