"""The rack page: every cable and module in a rack, device by device from the top U down."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Alert, CableEnd, Cage, Device, Port, Rack, Transceiver
from inventory.models.cables import END_PLACE_COLUMNS, cable_url
from inventory.selectors.pages.retest import retest_state


@dataclass
class RackRow:
    """One device in the rack with what is plugged into it, for working down the rack."""

    device: Device
    cables: list[dict] = field(default_factory=list)
    transceivers: list[Transceiver] = field(default_factory=list)


def rack_page(rack: Rack) -> dict:
    """Every cable and module in the rack, device by device from the top U down."""
    today = timezone.localdate()
    devices = list(Device.objects.filter(rack=rack, retired_at__isnull=True).order_by("-position_u", "name"))
    rows = {d.pk: RackRow(device=d) for d in devices}
    # Plain rows, not model instances: a network rack has about 800 cables and 1,600 far ends.
    # The ends on the rack's ports UNION ALL those on its cages (an end is on one or the other):
    # each half is an index lookup, where one OR across the two read every end of the plant
    # (3 s at 131,072 GPUs).
    columns = (
        "cable_id",
        "side",
        "connector",
        "port_id",
        "port__name",
        "port__device_id",
        "cage__name",
        "cage__index",
        "cage__device_id",
        "cable__label",
        "cable__status",
        "cable__retest_due",
    )
    on_ports = (
        CableEnd.objects.filter(active=True, port_id__in=Port.objects.filter(device__rack=rack).values("pk"))
        .order_by()
        .values_list(*columns)
    )
    on_cages = (
        CableEnd.objects.filter(active=True, cage_id__in=Cage.objects.filter(device__rack=rack).values("pk"))
        .order_by()
        .values_list(*columns)
    )
    here = list(on_ports.union(on_cages, all=True))
    here_ids = {h[0] for h in here}
    far_by_cable: dict[int, list[tuple]] = {}
    for row in (
        CableEnd.objects.filter(cable_id__in=here_ids)
        .order_by("side", "leg")
        .values_list("cable_id", "side", *END_PLACE_COLUMNS)
    ):
        far_by_cable.setdefault(row[0], []).append(row[1:])
    alerting = set(
        Alert.objects.filter(state="open", cable_id__in=here_ids).values_list("cable_id", flat=True)
    ) | set(
        Alert.cables.through.objects.filter(cable_id__in=here_ids, alert__state="open").values_list(
            "cable_id", flat=True
        )
    )
    status_display = dict(CableStatus.choices)
    for cable_id, side, conn, port_id, pname, pdev, cname, cindex, cdev, label, status, due in here:
        dev_id = pdev if port_id else cdev
        where = pname if port_id else cname + (f"/{conn}" if (conn or 1) > 1 else "")
        far = []
        for (
            o_side,
            o_port,
            o_pname,
            o_pdev,
            o_prack,
            o_pu,
            o_cage,
            o_cname,
            o_cdev,
            o_crack,
            o_cu,
        ) in far_by_cable.get(cable_id, []):
            if o_side == side or not (o_port or o_cage):
                continue
            if o_port:
                far.append({"rack": o_prack or "", "device": o_pdev, "where": o_pname, "u": o_pu})
            else:
                far.append({"rack": o_crack or "", "device": o_cdev, "where": o_cname, "u": o_cu})
        rows[dev_id].cables.append(
            {
                "cable": {
                    "pk": cable_id,
                    "label": label,
                    "status": status,
                    "status_display": status_display.get(status, status),
                    "url": cable_url(label),
                },
                "where": where,
                "sort": (cindex if not port_id else 0, conn or 0, where),
                "far": far,
                "far_text": "; ".join(f"{f['rack']} U{f['u'] or '?'} {f['device']} {f['where']}" for f in far)
                or "unterminated",
                "retest": retest_state(due, today),
                "alert": cable_id in alerting,
            }
        )
    for t in (
        Transceiver.objects.filter(cage__device__rack=rack)
        .select_related("model__vendor", "cage")
        .order_by("cage__index")
    ):
        if t.cage.device_id in rows:
            rows[t.cage.device_id].transceivers.append(t)
    for r in rows.values():
        r.cables.sort(key=lambda c: c["sort"])
    cable_count = len(here_ids)
    return {
        "rack": rack,
        "rows": [r for r in rows.values() if r.cables or r.transceivers],
        "empty_devices": [r.device for r in rows.values() if not r.cables and not r.transceivers],
        "cable_count": cable_count,
        "transceiver_count": sum(len(r.transceivers) for r in rows.values()),
        "overdue_count": len(
            {c["cable"]["pk"] for r in rows.values() for c in r.cables if c["retest"] == "overdue"}
        ),
        "today": today,
    }
