"""Reconciliation on the seeded cluster: the report for the whole site, and creating 2,000
missing module records in one reviewed step (preview + apply).

Telemetry is written straight into ``PortTelemetryState`` (what the ingest keeps): every
interface port reports its recorded module's serial and its recorded far end as neighbour,
except 1% of cages (another serial: a swap) and 1% of ports (a wrong neighbour). Then a new
hall of 125 leaves with 2,000 empty OSFP cages whose modules telemetry sees but nobody
recorded. No targets in the issue; the figures show the report and the apply stay set-based.
"""

from __future__ import annotations

import time


def _telemetry(now) -> tuple[int, int]:
    from inventory.core.choices import PortKind
    from inventory.models import Link, Port, PortTelemetryState, Transceiver

    ports = list(
        Port.objects.filter(kind=PortKind.INTERFACE, cage__isnull=False).values_list(
            "pk", "cage_id", "device__name", "name"
        )
    )
    serial = dict(Transceiver.objects.filter(cage__isnull=False).values_list("cage_id", "serial"))
    label = {pk: (d, n) for pk, _, d, n in ports}
    far = {}
    for a, b in Link.objects.filter(active=True).values_list("a_port_id", "b_port_id"):
        far[a], far[b] = b, a
    rows = []
    for i, (pk, cage, _d, _n) in enumerate(ports):
        s = serial.get(cage, "")
        if s and cage % 100 == 0:
            s = f"SWAP-{cage}"
        nd, np_ = label.get(far.get(pk), ("", ""))
        if nd and i % 100 == 1:
            np_ = "Ethernet64/2"
        rows.append(
            PortTelemetryState(
                port_id=pk,
                last_ts=now,
                identity_seen_at=now,
                module_vendor="NVIDIA",
                module_part="MMS4X00-NM",
                module_serial=s,
                neighbor_device=nd,
                neighbor_port=np_,
            )
        )
    # Other benchmarks (load, telemetry) may already have left state for these ports.
    PortTelemetryState.objects.bulk_create(
        rows,
        batch_size=5000,
        update_conflicts=True,
        unique_fields=["port"],
        update_fields=[
            "last_ts",
            "identity_seen_at",
            "module_vendor",
            "module_part",
            "module_serial",
            "neighbor_device",
            "neighbor_port",
        ],
    )
    return len(ports), len(far) // 2


def _new_hall(now, cages: int = 2000) -> str:
    """125 leaves x 16 empty OSFP cages (two ports each), with the modules telemetry sees."""
    from inventory.core.choices import DeviceRole, FormFactor
    from inventory.db import bulk
    from inventory.models import Cage, Device, Port, PortTelemetryState, Rack, Room, Row, Site

    site = Site.objects.create(name="New hall", slug="new-hall")
    row = Row.objects.create(room=Room.objects.create(site=site, name="H2"), name="N1")
    per_leaf = 16
    leaves = cages // per_leaf
    racks = bulk.bulk_insert(Rack, [Rack(row=row, name=f"N1-{i:03d}") for i in range(leaves)])
    devices = bulk.bulk_insert(
        Device,
        [
            Device(name=f"leaf-n{i:03d}", role=DeviceRole.LEAF, rack=r, position_u=40)
            for i, r in enumerate(racks)
        ],
    )
    cage_objs = bulk.bulk_insert(
        Cage,
        [
            Cage(device=d, name=f"OSFP{c + 1}", index=c + 1, form_factor=FormFactor.OSFP)
            for d in devices
            for c in range(per_leaf)
        ],
    )
    port_objs = bulk.bulk_insert(
        Port,
        [
            Port(
                device_id=c.device_id,
                name=f"Ethernet{c.index}/{k + 1}",
                cage=c,
                connector=k + 1,
                lane_count=4,
            )
            for c in cage_objs
            for k in range(2)
        ],
    )
    PortTelemetryState.objects.bulk_create(
        [
            PortTelemetryState(
                port_id=p.pk,
                last_ts=now,
                identity_seen_at=now,
                module_vendor="NVIDIA",
                module_part="MMS4X00-NM",
                module_serial=f"NEW-{p.cage_id}",
            )
            for p in port_objs
        ],
        batch_size=5000,
    )
    return site.slug


def run(report) -> None:
    from django.contrib.auth.models import Group
    from django.utils import timezone

    from inventory.models import Site, Transceiver, TransceiverModel
    from inventory.selectors.telemetry.reconciliation import reconciliation_report
    from inventory.services.telemetry.reconciliation import reconciliation_apply, reconciliation_preview

    now = timezone.now()
    if not TransceiverModel.objects.filter(part_number="MMS4X00-NM").exists():
        raise RuntimeError("the demo seed has no MMS4X00-NM module model")
    ports, links = _telemetry(now)
    site = Site.objects.exclude(slug="new-hall").order_by("pk").first().slug
    t = time.perf_counter()
    r = reconciliation_report(now=now, site=site)
    report(
        f"reconciliation report, whole site ({ports:,} ports, {links:,} links)", time.perf_counter() - t, "s"
    )
    c = r.counts()
    print(
        f"    swaps {c['module_swap']:,}, miswires {c['neighbour_miswire']:,}, modules ok {c['module_ok']:,}"
    )

    hall = _new_hall(now)
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create(username="bench-recon")
    user.groups.add(Group.objects.get(name="engineer"))
    t = time.perf_counter()
    p = reconciliation_preview(actor=user, now=now, site=hall)
    report(f"reconciliation preview, {len(p.create):,} missing modules", time.perf_counter() - t, "s")
    t = time.perf_counter()
    out = reconciliation_apply(token=p.token, actor=user, now=now)
    report(
        f"reconciliation apply, {len(out.created):,} modules + placements + history",
        time.perf_counter() - t,
        "s",
    )
    assert Transceiver.objects.filter(serial__startswith="NEW-").count() == len(p.create) == 2000
