"""The rack page and the device page: every cable and module of a rack (or one device),
device by device from the top U down, ports in natural order, and the rack's elevation.

Each cable row a page lists says the cable's one decision (``selectors.decision``: its state
words and next step, as the cable page, the desk list and the API say them), read for the rows
listed in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from html import escape

from django.utils import timezone
from django.utils.safestring import mark_safe

from inventory.core.choices import CableStatus, PortKind
from inventory.core.elevation import RackDevice, Socket, rack_elevation, socket_status
from inventory.core.natsort import natural_key
from inventory.db.compiled import CompiledRead
from inventory.models import CableEnd, Cage, Device, Port, Rack, Transceiver
from inventory.models.cables import END_PLACE_COLUMNS, cable_url
from inventory.models.devices import device_url, port_url
from inventory.selectors.alerts.queries import open_alerts_touching, rack_alerts_context
from inventory.selectors.decision import cable_decisions_by_id, cables_under_watch
from inventory.selectors.pages.retest import retest_state

ATTENTION_STATUSES = (CableStatus.DEGRADED, CableStatus.FAULTY)


@dataclass
class RackRow:
    """One device in the rack with what is plugged into it, for working down the rack."""

    device: Device
    cables: list[dict] = field(default_factory=list)
    transceivers: list[Transceiver] = field(default_factory=list)  # the device page reads them whole
    module_cages: set[str] = field(default_factory=set)  # names of the cages holding a module

    @property
    def module_count(self) -> int:
        return len(self.module_cages)

    @property
    def url(self) -> str:
        return device_url(self.device.name)

    @property
    def attention(self) -> list[dict]:
        """The cables a technician at the rack should look at (``device_rows`` decided them: an
        open alert or fault, a failing latest test, a retest overdue, degraded or faulty), each with
        its decision. The rest are on the device page, one tap away."""
        return [c for c in self.cables if c["decision"] is not None]

    @property
    def alert_count(self) -> int:
        return sum(1 for c in self.cables if c["alert"])

    @property
    def overdue_count(self) -> int:
        return sum(1 for c in self.cables if c["retest"] == "overdue")


def _far_ends(rows: list[tuple], side: str) -> list[dict]:
    far = []
    for o_side, o_port, o_pname, o_pdev, o_prack, o_pu, o_cage, o_cname, o_cdev, o_crack, o_cu in rows:
        if o_side == side or not (o_port or o_cage):
            continue
        if o_port:
            far.append({"rack": o_prack or "", "device": o_pdev, "where": o_pname, "u": o_pu})
        else:
            far.append({"rack": o_crack or "", "device": o_cdev, "where": o_cname, "u": o_cu})
    return far


# The ends on these devices' ports UNION ALL those on their cages (an end is on one or the
# other): each half is an index lookup, where one OR across the two read every end of the
# plant (3 s at 131,072 GPUs); ``in_array`` keeps it one (the port and cage ids read first).
# Compiled once per process, as the reads below (``CompiledRead``): a network rack's page spent
# more CPU building its queries than PostgreSQL spent running them.
_HERE_COLUMNS = (
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
_ENDS_HERE = CompiledRead(
    lambda dev_ids: (
        CableEnd.objects.filter(
            active=True, port_id__in_array=Port.objects.filter(device_id__any=dev_ids).values("pk")
        )
        .order_by()
        .values_list(*_HERE_COLUMNS)
        .union(
            CableEnd.objects.filter(
                active=True, cage_id__in_array=Cage.objects.filter(device_id__any=dev_ids).values("pk")
            )
            .order_by()
            .values_list(*_HERE_COLUMNS),
            all=True,
        )
    )
)
_FAR_ENDS = CompiledRead(
    lambda cable_ids: (
        CableEnd.objects.filter(cable_id__any=cable_ids)
        .order_by("side", "leg")
        .values_list("cable_id", "side", *END_PLACE_COLUMNS)
    )
)
_CAGES = CompiledRead(
    lambda dev_ids: (
        Cage.objects.filter(device_id__any=dev_ids)
        .order_by()
        .values_list("device_id", "name", "index", "transceiver")
    )
)
_LOOSE_PORTS = CompiledRead(
    lambda dev_ids: (
        Port.objects.filter(device_id__any=dev_ids, cage__isnull=True, retired_at__isnull=True)
        .exclude(kind=PortKind.REAR)
        .values_list("pk", "device_id", "name")
    )
)
_RACK_DEVICES = CompiledRead(
    lambda rack_id: Device.objects.filter(rack_id=rack_id, retired_at__isnull=True).order_by(
        "-position_u", "name"
    )
)


def device_rows(
    devices: list[Device], now: datetime, *, modules: bool = True, rack_alerts: bool = False
) -> tuple[dict[int, RackRow], list[int]]:
    """What is plugged into these devices, one row per device; and the open alerts found.

    Plain rows, not model instances: a network rack has about 800 cables and 1,600 far ends.
    ``modules=False`` (the rack page) reads no modules (its drawing reads which cages hold one)
    and the far ends and decisions of the cables that need attention only (the rows it lists: an
    open alert naming the cable or on a link through it, an open fault report, a failing latest
    test of its own, a retest overdue, degraded or faulty; the others are counted, and coloured
    in the drawing). The device page (``modules=True``) reads them for every cable of the device.
    ``rack_alerts``: also find the open alerts on these devices' ports and links (the ids, for
    the rack's alert block), in the same query.
    """
    today = timezone.localdate(now)
    rows = {d.pk: RackRow(device=d) for d in devices}
    dev_ids = list(rows)
    # The ends on these devices' ports UNION ALL those on their cages (an end is on one or the
    # other): each half is an index lookup, where one OR across the two read every end of the
    # plant (3 s at 131,072 GPUs); ``in_array`` keeps it one (the port and cage ids read first).
    here = _ENDS_HERE(dev_ids)
    here_ids = sorted({h[0] for h in here})
    touching = open_alerts_touching(cable_ids=here_ids, device_ids=dev_ids if rack_alerts else [])
    if modules:
        far_ids = here_ids
    else:  # the rack page lists only the cables that need attention, with where they go
        watched = {cable_id for _, cable_id in touching if cable_id is not None}
        watched |= cables_under_watch(here_ids)
        far_ids = sorted(
            {
                h[0]
                for h in here
                if h[0] in watched
                or h[10] in ATTENTION_STATUSES
                or retest_state(h[11], today, h[10]) == "overdue"
            }
        )
    # The rows listed say the one decision (state words, next step, the alert flag), as the
    # cable page does: not a status of their own.
    decisions = cable_decisions_by_id(cable_ids=far_ids, now=now)
    far_by_cable: dict[int, list[tuple]] = {}
    if far_ids:
        for row in _FAR_ENDS(far_ids):
            far_by_cable.setdefault(row[0], []).append(row[1:])
    status_display = dict(CableStatus.choices)
    names = {d.pk: d.name for d in devices}
    for cable_id, side, conn, port_id, pname, pdev, cname, cindex, cdev, label, status, due in here:
        dev_id = pdev if port_id else cdev
        where = pname if port_id else cname + (f"/{conn}" if (conn or 1) > 1 else "")
        read = cable_id in far_by_cable
        far = _far_ends(far_by_cable[cable_id], side) if read else []
        rows[dev_id].cables.append(
            {
                "cable": {
                    "pk": cable_id,
                    "label": label,
                    "status": status,
                    "status_display": status_display.get(status, status),
                    # Only the rows a page lists link anywhere (the rack page's few, all of
                    # the device page's): no URL quoting for a network rack's 800 others.
                    "url": cable_url(label) if read else "",
                },
                "where": where,
                "where_url": port_url(names[dev_id], pname) if port_id and read else None,
                "cage": cname,
                "connector": conn or 1,
                "port_id": port_id,
                "sort": (cindex if not port_id else 0, natural_key(where), conn or 0),
                "far": far,
                "far_text": (
                    "; ".join(f"{f['rack']} U{f['u'] or '?'} {f['device']} {f['where']}" for f in far)
                    or "unterminated"
                )
                if read
                else "",
                "retest": retest_state(due, today, status),
                "decision": decisions.get(cable_id),
                "alert": bool(read and decisions[cable_id].alerts),
            }
        )
    if modules:
        for t in (
            Transceiver.objects.filter(cage__device_id__in=dev_ids)
            .select_related("model__vendor", "cage")
            .order_by("cage__index")
        ):
            rows[t.cage.device_id].transceivers.append(t)
            rows[t.cage.device_id].module_cages.add(t.cage.name)
    for r in rows.values():
        r.cables.sort(key=lambda c: c["sort"])
    return rows, sorted({a for a, _ in touching})


def _elevation(rack: Rack, devices: list[Device], rows: dict[int, RackRow]):
    """The rack drawing: each device's cages (and cage-less front/copper ports) coloured by the
    worst status of the cables in them. Two small reads: the cages (with whether each holds a
    module, which also gives the rows their module counts) and the cage-less ports."""
    dev_ids = [d.pk for d in devices]
    status_display = dict(CableStatus.choices)
    by_cage: dict[str, list[str]] = {}
    by_port: dict[int, list[str]] = {}
    for r in rows.values():
        for c in r.cables:
            if c["port_id"]:
                by_port.setdefault(c["port_id"], []).append(c["cable"]["status"])
            else:
                by_cage.setdefault(f"{r.device.pk}:{c['cage']}", []).append(c["cable"]["status"])
    sockets: dict[int, list[tuple]] = {pk: [] for pk in dev_ids}
    for dev_id, name, index, module_id in _CAGES(dev_ids):
        if module_id is not None:
            rows[dev_id].module_cages.add(name)
        st = socket_status(by_cage.get(f"{dev_id}:{name}", []))
        sockets[dev_id].append(((0, index), Socket(name, st, module_id is not None)))
    for pk, dev_id, name in _LOOSE_PORTS(dev_ids):
        sockets[dev_id].append(((1, natural_key(name)), Socket(name, socket_status(by_port.get(pk, [])))))
    for lst in sockets.values():
        for _, s in lst:
            s.status_text = status_display.get(s.status, "") if s.status else ""
    drawn = [
        RackDevice(
            name=d.name,
            position_u=d.position_u,
            height_u=d.height_u,
            role=d.get_role_display(),
            sockets=[s for _, s in sorted(sockets[d.pk], key=lambda x: x[0])],
        )
        for d in devices
        if d.position_u
    ]
    elevation = rack_elevation(u_height=rack.u_height, devices=drawn)
    for b in elevation.bands:
        if b.device is not None:
            b.url = device_url(b.device.name)
            # One string per device instead of a template loop per socket (a leaf has 64), and
            # html.escape (what format_html calls) without its per-argument lazy-string checks:
            # a network rack draws some 550 sockets.
            b.sockets_svg = mark_safe(  # noqa: S308 - every interpolated string is escaped here
                "".join(
                    f'<rect class="el-sk {escape(k.css)}" x="{k.x}" y="{k.y}" width="9" '
                    f'height="9"><title>{escape(k.title)}</title></rect>'
                    for k in b.sockets
                )
            )
    return elevation


def rack_page(rack: Rack) -> dict:
    """Every cable and module in the rack, device by device from the top U down, and its drawing."""
    now = timezone.now()
    today = timezone.localdate(now)
    devices = _RACK_DEVICES(rack.pk)
    rows, alert_ids = device_rows(devices, now, modules=False, rack_alerts=True)
    here_ids = {c["cable"]["pk"] for r in rows.values() for c in r.cables}
    elevation = _elevation(rack, devices, rows)  # also fills each row's module cages
    return {
        **rack_alerts_context(rack, alert_ids=alert_ids),
        "rack": rack,
        "rows": [r for r in rows.values() if r.cables or r.module_cages],
        "empty_devices": [r.device for r in rows.values() if not r.cables and not r.module_cages],
        "elevation": elevation,
        "cable_count": len(here_ids),
        "transceiver_count": sum(r.module_count for r in rows.values()),
        "overdue_count": len(
            {c["cable"]["pk"] for r in rows.values() for c in r.cables if c["retest"] == "overdue"}
        ),
        "today": today,
    }
