"""What the pages show, gathered in a fixed number of queries."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from datetime import date, timedelta

from django.db.models import Count, Exists, OuterRef, Prefetch, Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from inventory.core.choices import CableStatus, TestKind
from inventory.core.pathcheck import PathVerdict
from inventory.models import (
    Alert,
    Cable,
    CableEnd,
    CableTest,
    Cage,
    Device,
    FieldNote,
    Link,
    LinkSegment,
    Port,
    Rack,
    Transceiver,
    TransceiverPlacement,
)
from inventory.models.cables import END_PLACE_COLUMNS, cable_url
from inventory.selectors.plant.history import history_for
from inventory.selectors.plant.trace import Point, Segment, Trace, port_trace

END_RELATED = ("port__device__rack", "cage__device__rack", "cage__transceiver__model__vendor")
DUE_SOON_DAYS = 14


def optional(module: str, name: str):
    """A function another part of the product provides, or None while it is not there yet."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def optional_url(name: str, *args) -> str | None:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return None


def retest_state(due: date | None, today: date) -> str:
    """``overdue``, ``soon`` (within two weeks), ``ok`` or ``none`` (no retest scheduled)."""
    if due is None:
        return "none"
    if due < today:
        return "overdue"
    if due <= today + timedelta(days=DUE_SOON_DAYS):
        return "soon"
    return "ok"


def dashboard() -> dict:
    today = timezone.localdate()
    counts = Cable.objects.aggregate(
        total=Count("pk", filter=~Q(status=CableStatus.RETIRED)),
        overdue=Count("pk", filter=Q(retest_due__lt=today) & ~Q(status=CableStatus.RETIRED)),
        degraded=Count("pk", filter=Q(status__in=[CableStatus.DEGRADED, CableStatus.FAULTY])),
    )
    counts["open_alerts"] = Alert.objects.filter(state="open").count()
    faults = list(
        FieldNote.objects.filter(kind="fault").select_related("cable", "actor").order_by("-at", "-id")[:10]
    )
    return {"counts": counts, "recent_faults": faults}


# --- search -------------------------------------------------------------------------------


def _split_device_port(q: str) -> tuple[str, str] | None:
    for sep in (":", " "):
        if sep in q:
            dev, _, port = q.partition(sep)
            if dev.strip() and port.strip():
                return dev.strip(), port.strip()
    return None


def search(q: str, limit: int = 20) -> dict:
    """Partial, case-insensitive matches on labels, serials, devices and port names/aliases.

    ``device:port`` (or ``device port``) narrows ports to a device.
    """
    q = q.strip()
    cables = list(
        Cable.objects.filter(
            Q(label__icontains=q)
            | Q(serial_a__icontains=q)
            | Q(serial_b__icontains=q)
            | Q(pk__in=CableEnd.objects.filter(label__icontains=q).exclude(label="").values("cable_id"))
        ).order_by("label")[:limit]
    )
    racks = list(Rack.objects.filter(name__icontains=q).order_by("name")[:limit])
    devices = list(
        Device.objects.filter(Q(name__icontains=q) | Q(serial__icontains=q) | Q(asset_tag__icontains=q))
        .select_related("rack")
        .order_by("name")[:limit]
    )
    transceivers = list(
        Transceiver.objects.filter(serial__icontains=q)
        .select_related("model__vendor", "cage__device")
        .order_by("serial")[:limit]
    )
    split = _split_device_port(q)
    if split:
        dev, name = split
        port_q = Q(device__name__icontains=dev) & (Q(name__icontains=name) | Q(aliases__name__icontains=name))
    else:
        port_q = Q(name__icontains=q) | Q(aliases__name__icontains=q)
    port_ids = list(
        Port.objects.filter(port_q, retired_at__isnull=True)
        .order_by("device__name", "name")
        .values_list("pk", flat=True)
        .distinct()[: limit * 3]
    )[:limit]
    ports = list(
        Port.objects.filter(pk__in=port_ids)
        .select_related("device__rack")
        .prefetch_related("aliases")
        .order_by("device__name", "name")
    )
    _attach_cables(ports)
    return {
        "cables": cables,
        "racks": racks,
        "devices": devices,
        "transceivers": transceivers,
        "ports": ports,
    }


def _attach_cables(ports: list[Port]) -> None:
    """Set ``port.cable`` to the active cable plugged into each port (one query)."""
    for p in ports:
        p.cable = None
    if not ports:
        return
    by_port = {p.pk: p for p in ports}
    by_cage = {(p.cage_id, p.connector): p for p in ports if p.cage_id}
    ends = CableEnd.objects.filter(active=True).filter(
        Q(port_id__in=list(by_port)) | Q(cage_id__in=[c for c, _ in by_cage])
    )
    for end in ends.select_related("cable"):
        if end.port_id in by_port:
            by_port[end.port_id].cable = end.cable
        # several logical ports can share one cage connector
        for p in ports:
            if end.cage_id and p.cage_id == end.cage_id and p.connector == end.connector:
                p.cable = end.cable


def search_single_target(results: dict) -> str | None:
    """The one page a search means, when it found exactly one thing."""
    hits = [(k, o) for k, objs in results.items() for o in objs]
    if len(hits) != 1:
        return None
    kind, obj = hits[0]
    if kind == "cables" or kind == "racks":
        return obj.get_absolute_url()
    if kind == "transceivers":
        return reverse("transceiver-detail", args=[obj.pk])
    if kind == "devices" and obj.rack_id:
        return obj.rack.get_absolute_url()
    if kind == "ports" and obj.cable is not None:
        return obj.cable.get_absolute_url()
    return None


# --- the cable page -----------------------------------------------------------------------


@dataclass
class EndView:
    """One plug of the cable, as the phone page shows it."""

    end: CableEnd
    rack: Rack | None = None
    u: int | None = None
    device: Device | None = None
    where: str = ""
    ports: list[Port] = field(default_factory=list)
    transceiver: Transceiver | None = None
    placements: list[TransceiverPlacement] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.end.side}{self.end.leg or ''}"


def _end_views(ends: list[CableEnd]) -> list[EndView]:
    views = []
    cage_ids = {e.cage_id for e in ends if e.cage_id}
    logical: dict[tuple[int, int], list[Port]] = {}
    placements: dict[int, list[TransceiverPlacement]] = {}
    if cage_ids:
        for p in Port.objects.filter(cage_id__in=cage_ids, retired_at__isnull=True).order_by("lane_start"):
            logical.setdefault((p.cage_id, p.connector), []).append(p)
        for pl in (
            TransceiverPlacement.objects.filter(cage_id__in=cage_ids)
            .select_related("transceiver__model", "installed_by", "removed_by")
            .order_by("-installed_at", "-id")
        ):
            placements.setdefault(pl.cage_id, []).append(pl)
    for e in ends:
        v = EndView(end=e)
        if e.port_id:
            dev = e.port.device
            v.device, v.ports, v.where = dev, [e.port], e.port.name
        elif e.cage_id:
            dev = e.cage.device
            v.device = dev
            v.where = e.cage.name + (f"/{e.connector}" if e.connector and e.connector > 1 else "")
            v.ports = logical.get((e.cage_id, e.connector), [])
            v.transceiver = getattr(e.cage, "transceiver", None)
            v.placements = placements.get(e.cage_id, [])
        if v.device is not None:
            v.rack, v.u = v.device.rack, v.device.position_u
        views.append(v)
    return views


def latest_tests(cable: Cable) -> list[CableTest]:
    """The newest test of each kind (OLTS, OTDR, inspection, qualification)."""
    seen: dict[str, CableTest] = {}
    for t in (
        CableTest.objects.filter(cable=cable)
        .select_related("technician")
        .defer("details", "warnings")
        .order_by("kind", "-tested_at", "-id")
    ):
        seen.setdefault(t.kind, t)
    order = [TestKind.OLTS, TestKind.OTDR, TestKind.INSPECTION, TestKind.QUALIFICATION]
    return sorted(seen.values(), key=lambda t: order.index(t.kind) if t.kind in order else 99)


def _port_point(port: Port) -> Point:
    dev = port.device
    return Point(
        dev.name,
        dev.rack.name if dev.rack_id else None,
        dev.position_u,
        port.name,
        port_id=port.pk,
        cage_id=port.cage_id,
        connector=port.connector,
        device_id=dev.pk,
    )


def _end_point(e: CableEnd) -> Point:
    if e.port_id:
        return _port_point(e.port)
    cage = e.cage
    dev = cage.device
    xcvr = getattr(cage, "transceiver", None)
    multi = bool(xcvr and xcvr.model.connector_count > 1)
    name = f"{cage.name}/{e.connector}" if multi or (e.connector or 1) > 1 else cage.name
    return Point(
        dev.name,
        dev.rack.name if dev.rack_id else None,
        dev.position_u,
        name,
        cage_id=cage.pk,
        connector=e.connector,
        device_id=dev.pk,
    )


@dataclass
class LinkRows:
    """One link's segments, their cables and every end of them (retired ends included), as
    the trace read them: ``link_verdicts`` takes them instead of reading them again."""

    segs: dict[int, list[int]]
    cables: dict[int, Cable]
    ends: dict[int, list[CableEnd]]


def _link_trace(
    link: Link, cable: Cable | None = None, cable_ends: list[CableEnd] | None = None
) -> tuple[Trace, LinkRows]:
    """The path of a recorded link, from its stored segments (no walk through the panels).

    ``links_refresh_for_ports`` keeps a link's segments and path verdict in step with the
    cabling, so the page reads them in two queries instead of tracing hop by hop. The page's
    own cable and its ends (already read, ``cable``/``cable_ends``) are not read again.
    """
    segs = list(link.segments.select_related("cable").order_by("seq"))
    all_ends: dict[int, list[CableEnd]] = {}
    if cable is not None and cable_ends is not None:
        all_ends[cable.pk] = cable_ends
    others = [s.cable_id for s in segs if s.cable_id not in all_ends]
    if others:
        for e in (
            CableEnd.objects.filter(cable_id__in=others)
            .select_related("port__device__rack", "cage__device__rack", "cage__transceiver__model")
            .order_by("side", "leg")
        ):
            all_ends.setdefault(e.cable_id, []).append(e)
    ends_by_cable = {cid: [e for e in ends if e.active] for cid, ends in all_ends.items()}
    rows = LinkRows(
        segs={link.pk: [s.cable_id for s in segs]},
        cables={s.cable_id: s.cable for s in segs},
        ends=all_ends,
    )

    def device_of(e: CableEnd) -> int | None:
        return e.port.device_id if e.port_id else (e.cage.device_id if e.cage_id else None)

    trace = Trace(start=_port_point(link.a_port))
    trace.far, trace.far_port_id, trace.complete = _port_point(link.b_port), link.b_port_id, True
    trace.verdict = PathVerdict(ok=link.path_ok, problems=[str(p) for p in (link.path_problems or [])])
    prev_dev = link.a_port.device_id
    for i, seg in enumerate(segs):
        ends = ends_by_cable.get(seg.cable_id, [])
        if not ends:
            continue
        if i + 1 < len(segs):
            next_devs = {device_of(e) for e in ends_by_cable.get(segs[i + 1].cable_id, [])}
        else:
            next_devs = {link.b_port.device_id}
        near = next((e for e in ends if device_of(e) == prev_dev), ends[0])
        others = [e for e in ends if e.side != near.side] or [near]
        far = next((e for e in others if device_of(e) in next_devs), others[0])
        c = seg.cable
        trace.segments.append(
            Segment(
                c.pk,
                c.label,
                c.kind,
                c.role,
                c.polarity,
                c.status,
                _end_point(near),
                _end_point(far),
                near.leg,
                far.leg,
            )
        )
        prev_dev = device_of(far)
    return trace, rows


def cable_links(cable: Cable) -> list[Link]:
    """The active links this cable carries (its trace, alerts and test panels all need them)."""
    on_cable = LinkSegment.objects.filter(cable=cable).values("link_id")  # a subquery: no DISTINCT
    return list(
        Link.objects.filter(active=True, pk__in=on_cable)
        .select_related("a_port__device__rack", "b_port__device__rack")
        .order_by("pk")
    )


def cable_trace(
    cable: Cable, ends: list[EndView], links: list[Link] | None = None
) -> tuple[Trace | None, int, LinkRows | None]:
    """The channel this cable is part of, how many links it carries, and the link's rows.

    A cable on exactly one recorded link shows that link's whole path (and returns the rows
    it read, for the link's verdicts); otherwise (a trunk carrying many links, or a cable on
    no complete link yet) the path is traced from end A.
    """
    if links is None:
        links = cable_links(cable)
    if len(links) == 1:
        trace, rows = _link_trace(links[0], cable, [v.end for v in ends])
        return trace, 1, rows
    link_count = len(links)
    a = next((v for v in ends if v.end.side == "A" and v.end.active), None)
    if a is None or not a.ports:
        return None, link_count, None
    return port_trace(a.ports[0]), link_count, None


def _placement_entries(ends: list[EndView]) -> list[dict]:
    """Module moves in the cages this cable plugs into, as history lines."""
    out = []
    for v in ends:
        where = f"{v.device.name} {v.end.cage.name}" if v.end.cage_id and v.device else ""
        for pl in v.placements:
            serial = pl.transceiver.serial
            out.append(
                {
                    "when": pl.installed_at.isoformat(),
                    "who": pl.installed_by.get_username() if pl.installed_by else None,
                    "what": "installed module",
                    "subject": f"{serial} in {where}",
                    "reason": "",
                    "changes": [],
                }
            )
            if pl.removed_at:
                out.append(
                    {
                        "when": pl.removed_at.isoformat(),
                        "who": pl.removed_by.get_username() if pl.removed_by else None,
                        "what": f"removed module ({pl.get_end_reason_display().lower()})",
                        "subject": f"{serial} from {where}",
                        "reason": pl.notes,
                        "changes": [],
                    }
                )
    return out


def _history(cable: Cable, notes: list[FieldNote], ends: list[EndView] = (), limit: int = 30) -> list[dict]:
    entries = history_for(cable) + _placement_entries(list(ends))
    for n in notes:
        entries.append(
            {
                "when": n.at.isoformat(),
                "who": n.actor.get_username() if n.actor else None,
                "what": n.get_kind_display().lower(),
                "subject": f"cable {cable.label}",
                "reason": n.text,
                "changes": (
                    [{"field": "status", "old": n.status_before, "new": n.status_after}]
                    if n.status_before != n.status_after
                    else []
                ),
                "note": True,
            }
        )
    entries.sort(key=lambda e: e["when"], reverse=True)
    entries = entries[:limit]
    for e in entries:
        e["when_display"] = e["when"][:16].replace("T", " ")
    return entries


def cable_actions(cable: Cable) -> dict:
    """The one-tap actions, each a URL (or None while the form that serves it is not there)."""
    label = cable.label
    live = cable.status != CableStatus.RETIRED
    return {
        "olts": optional_url("cable-test-olts", label) if live else None,
        "otdr": optional_url("cable-test-otdr", label) if live else None,
        "inspect": optional_url("cable-inspect", label) if live else None,
        "fault": reverse("cable-fault", args=[label]) if live else None,
        "swap": reverse("cable-swap", args=[label]) if live and not cable.is_sealed else None,
        "replace": reverse("cable-replace", args=[label]) if live else None,
        "serviced": reverse("cable-serviced", args=[label]) if live else None,
        "edit": reverse("cable-edit", args=[label]) if live else None,
    }


def cable_page_ends(cable: Cable) -> list[EndView]:
    return _end_views(list(cable.ends.select_related(*END_RELATED).order_by("side", "leg")))


def cable_page(cable: Cable) -> dict:
    today = timezone.localdate()
    end_views = cable_page_ends(cable)
    links = cable_links(cable)  # read once: the trace, alerts and test panels share them
    trace, link_count, link_rows = (
        cable_trace(cable, end_views, links) if cable.status != CableStatus.RETIRED else (None, 0, None)
    )
    notes = list(FieldNote.objects.filter(cable=cable).select_related("actor").order_by("-at", "-id")[:50])
    ctx = {
        "cable": cable,
        "ends": end_views,
        "trace": trace,
        "link_count": link_count,
        "today": today,
        "retest": retest_state(cable.retest_due, today),
        "overdue": bool(cable.retest_due and cable.retest_due < today),
        "notes": notes,
        "history": _history(cable, notes, end_views),
        "replaces": list(cable.replaces.all().only("label")),
        "actions": cable_actions(cable),
    }
    # Other parts of the product contribute panels; the page works before they exist.
    alerts_ctx = optional("inventory.selectors.alerts.queries", "cable_alerts_context")
    if alerts_ctx is not None:
        ctx.update(alerts_ctx(cable, links=links))
        ctx["alerts_panel"] = True
    else:
        ctx["open_alerts"] = list(Alert.objects.filter(cable=cable, state="open").order_by("-opened_at")[:10])
    tests_ctx = optional("inventory.selectors.testing.results", "cable_tests_context")
    if tests_ctx is not None:
        ctx.update(tests_ctx(cable, links=links, link_rows=link_rows))
        ctx["tests_panel"] = True
    else:
        ctx["latest_tests"] = latest_tests(cable)
    return ctx


# --- the rack page ------------------------------------------------------------------------


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
    here = list(
        CableEnd.objects.filter(active=True)
        .filter(
            Q(port_id__in=Port.objects.filter(device__rack=rack).values("pk"))
            | Q(cage_id__in=Cage.objects.filter(device__rack=rack).values("pk"))
        )
        .values_list(
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
    )
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


# --- desk lists ---------------------------------------------------------------------------

CABLE_SORTS = {
    "label": "label",
    "status": "status",
    "kind": "kind",
    "length": "length_m",
    "installed": "install_date",
    "retest": "retest_due",
    "vendor": "vendor__name",
}
TRANSCEIVER_SORTS = {
    "serial": "serial",
    "status": "status",
    "part": "model__part_number",
    "vendor": "model__vendor__name",
    "device": "cage__device__name",
}


def _ordering(sort: str, allowed: dict[str, str], default: str) -> tuple[str, list[str]]:
    key = sort.lstrip("-")
    if key not in allowed:
        return default, [allowed[default], "pk"]
    desc = sort.startswith("-")
    return sort, [("-" if desc else "") + allowed[key], "-pk" if desc else "pk"]


def cable_list_queryset(qs, *, sort: str = "label", prefetch_ends: bool = True):
    """The desk cable list: the FilterSet's queryset, sorted, with what each row shows.

    ``prefetch_ends=False`` leaves the ends and the open-alert flag to :func:`attach_end_cells`
    (the HTML page reads them for its page of rows only, in two flat queries).
    """
    sort, order = _ordering(sort, CABLE_SORTS, "label")
    qs = qs.select_related("vendor").order_by(*order)
    if prefetch_ends:
        ends = CableEnd.objects.select_related("port__device__rack", "cage__device__rack").order_by(
            "side", "leg"
        )
        qs = qs.prefetch_related(Prefetch("ends", queryset=ends)).annotate(has_alert=Exists(_open_alert()))
    return sort, qs


def _open_alert():
    return Alert.objects.filter(Q(cable_id=OuterRef("pk")) | Q(cables=OuterRef("pk")), state="open")


def attach_end_cells(cables) -> None:
    """Set ``end_cells`` on each cable: ``(A lines, B lines)``, ``rack U<u> device port`` each,
    and ``has_alert`` (an open alert names it).

    One query for the whole page instead of five model instances per end and a template loop
    over every end for each side.
    """
    by_id = {c.pk: c for c in cables}
    # The open-alert flag for this page's rows only: as an annotation on the list it was
    # evaluated for every matching cable before a sort by anything but label (300 ms).
    alerted = set(
        Cable.objects.filter(pk__in=list(by_id)).filter(Exists(_open_alert())).values_list("pk", flat=True)
    )
    for c in cables:
        c.end_cells = ([], [])
        c.has_alert = c.pk in alerted
    rows = (
        CableEnd.objects.filter(cable_id__in=list(by_id))
        .order_by("cable_id", "side", "leg")
        .values_list("cable_id", "side", "connector", *END_PLACE_COLUMNS)
    )
    for cable_id, side, conn, port_id, pname, pdev, prack, pu, cage_id, cname, cdev, crack, cu in rows:
        if port_id:
            line = f"{prack or ''} U{pu or '?'} {pdev} {pname}"
        elif cage_id:
            line = f"{crack or ''} U{cu or '?'} {cdev} {cname}" + (f"/{conn}" if conn and conn > 1 else "")
        else:
            line = ""
        by_id[cable_id].end_cells[0 if side == "A" else 1].append(line)


def transceiver_list_queryset(qs, *, sort: str = "serial"):
    sort, order = _ordering(sort, TRANSCEIVER_SORTS, "serial")
    return sort, qs.select_related("model__vendor", "cage__device__rack", "stock_site").order_by(*order)


def end_text(e: CableEnd) -> str:
    """``rack U device port`` for a plug, as on the label."""
    if e.port_id:
        dev, where = e.port.device, e.port.name
    elif e.cage_id:
        dev = e.cage.device
        where = e.cage.name + (f"/{e.connector}" if (e.connector or 1) > 1 else "")
    else:
        return "unterminated"
    rack = dev.rack.name if dev.rack_id else "-"
    return f"{rack} U{dev.position_u or '?'} {dev.name} {where}"


def transceiver_page(xcvr: Transceiver) -> dict:
    placements = list(
        xcvr.placements.select_related("cage__device__rack", "installed_by", "removed_by").order_by(
            "-installed_at", "-id"
        )
    )
    cables = []
    if xcvr.cage_id:
        cables = list(
            Cable.objects.filter(ends__cage_id=xcvr.cage_id, ends__active=True).distinct().order_by("label")
        )
    return {
        "xcvr": xcvr,
        "placements": placements,
        "cables": cables,
        "history": history_for(xcvr)[:30],
    }
