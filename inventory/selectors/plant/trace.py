"""Trace a port's physical path through cables, panels and breakouts.

Topology terms: a logical ``Port`` exits through (cage, connector); a ``CableEnd`` plugs into
a cage connector or a panel port; a panel front port maps to a rear-port position, and a
trunk carries positions straight through to the far panel's rear port.

The walk is hop by hop (each hop depends on the last), but it does not query hop by hop: one
recursive query (``_path_sql``) follows cables, panel mappings and trunk positions from the
start and returns every cable end of every cable on the path; three more read the ports and
cages those ends touch (with their devices' names, racks and U positions) and the panel
mappings. The hop-by-hop logic then runs over those rows in memory. A lookup the preload did not cover
(an edge the recursive query does not model) falls back to its own small query, so the
result never depends on the preload being complete: only the query count does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection, connections
from django.db.models import Q

from inventory.core.choices import CableKind, CableRole, PortKind
from inventory.core.pathcheck import FibreSegment, Mating, PathVerdict, check_path
from inventory.db.compiled import CompiledRead
from inventory.db.replica import read_alias
from inventory.models import Cable, CableEnd, Cage, Device, Port, PortMapping

MAX_HOPS = 16

_END_COLS = (
    "id",
    "cable_id",
    "side",
    "leg",
    "connector_type",
    "fibre_count",
    "pinned",
    "polish",
    "cage_id",
    "connector",
    "port_id",
    "active",
)
_CABLE_COLS = ("cable__label", "cable__kind", "cable__role", "cable__polarity", "cable__status")
_PORT_COLS = (
    "id",
    "device_id",
    "name",
    "kind",
    "cage_id",
    "connector",
    "lane_start",
    "connector_type",
    "fibre_count",
    "pinned",
    "polish",
)


_DEVICE_VIA_PORT = ("device__name", "device__rack__name", "device__position_u")
_CAGE_COLS = (
    "name",
    "device_id",
    "transceiver__model__connector_type",
    "transceiver__model__fibre_count",
    "transceiver__model__pinned",
    "transceiver__model__polish",
    "transceiver__model__connector_count",
)


@dataclass
class Point:
    """Where a plug sits: device, rack, U and the port or cage connector."""

    device: str
    rack: str | None
    u: int | None
    name: str
    port_id: int | None = None
    cage_id: int | None = None
    connector: int | None = None
    device_id: int | None = None

    def __str__(self) -> str:
        return f"{self.device}:{self.name}"


@dataclass
class Segment:
    cable_id: int
    label: str
    kind: str
    role: str
    polarity: str
    status: str
    near: Point
    far: Point
    near_leg: int = 0
    far_leg: int = 0


@dataclass
class Trace:
    start: Point
    segments: list[Segment] = field(default_factory=list)
    far_port_id: int | None = None
    far: Point | None = None
    verdict: PathVerdict = field(default_factory=PathVerdict)
    complete: bool = False

    @property
    def cable_ids(self) -> list[int]:
        return [s.cable_id for s in self.segments]


def _path_sql() -> str:
    """Every cable end of every cable reachable from the start termination, in one query.

    The recursive part steps from a cable to the cables plugged into the panel ports its far
    ends sit on: a front port goes to its rear port (remembering the position), a rear port
    goes to the front port at the remembered position. Breakout legs are all followed (the
    walk in Python picks the right one). Depth is capped at ``MAX_HOPS``.
    """
    t = {
        m.__name__: connection.ops.quote_name(m._meta.db_table) for m in (Cable, CableEnd, Port, PortMapping)
    }
    return f"""
    WITH RECURSIVE walk(cable_id, side, pos, depth) AS (
        SELECT e.cable_id, e.side, 1, 0
        FROM {t["CableEnd"]} e
        WHERE e.active AND (e.port_id = %s OR (e.cage_id = %s AND e.connector = %s))
      UNION
        SELECT n.cable_id, n.side, COALESCE(mf.rear_position, 1), w.depth + 1
        FROM walk w
        JOIN {t["CableEnd"]} f ON f.cable_id = w.cable_id AND f.side <> w.side AND f.active
        JOIN {t["Port"]} fp ON fp.id = f.port_id
        LEFT JOIN {t["PortMapping"]} mf ON fp.kind = 'front' AND mf.front_port_id = fp.id
        LEFT JOIN {t["PortMapping"]} mr
          ON fp.kind = 'rear' AND mr.rear_port_id = fp.id AND mr.rear_position = w.pos
        JOIN {t["CableEnd"]} n ON n.active AND n.port_id = COALESCE(mf.rear_port_id, mr.front_port_id)
        WHERE w.depth < {MAX_HOPS}
    )
    SELECT {", ".join("e." + c for c in _END_COLS)},
           {", ".join("c." + c.removeprefix("cable__") for c in _CABLE_COLS)}
    FROM {t["CableEnd"]} e JOIN {t["Cable"]} c ON c.id = e.cable_id
    WHERE e.cable_id IN (SELECT cable_id FROM walk)
    ORDER BY e.cable_id, e.leg
    """  # noqa: S608 - table names from model _meta; values are parameters


# The walk's reads, compiled once (``db.compiled``): the ids as one array each on PostgreSQL.
_PORTS = CompiledRead(
    lambda port_ids, cage_ids: Port.objects.filter(Q(pk__any=port_ids) | Q(cage_id__any=cage_ids)).values(
        *_PORT_COLS, "retired_at", *_DEVICE_VIA_PORT
    )
)
_CAGES = CompiledRead(
    lambda cage_ids: Cage.objects.filter(pk__any=cage_ids).values("id", *_CAGE_COLS, *_DEVICE_VIA_PORT)
)
_MAPPINGS = CompiledRead(
    lambda port_ids: PortMapping.objects.filter(
        Q(front_port_id__any=port_ids) | Q(rear_port_id__any=port_ids)
    ).values("front_port_id", "rear_port_id", "rear_position")
)


class _Walk:
    """Per-trace caches: the path's rows preloaded in a few queries, small queries on a miss."""

    def __init__(self) -> None:
        self.cages: dict[int, dict] = {}
        self.points: list[Point] = []
        self.ends_by_cable: dict[int, list[dict]] = {}
        self.end_on_port: dict[int, dict] = {}
        self.end_on_connector: dict[tuple[int, int], dict] = {}
        self.ports: dict[int, dict] = {}
        self.lanes: dict[tuple[int, int], list[dict]] = {}
        self.lane_cages: set[int] = set()
        self.rear_of: dict[int, dict | None] = {}
        self.front_at: dict[tuple[int, int], int] = {}
        self.mapped_ports: set[int] = set()
        self.devices: dict[int, dict] = {}

    def preload(self, *, port_id: int | None, cage_id: int | None, connector: int | None) -> None:
        with connections[read_alias()].cursor() as cur:
            cur.execute(_path_sql(), [port_id, cage_id, connector])
            names = [*_END_COLS, *_CABLE_COLS]
            rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
        port_ids = {port_id} if port_id else set()
        cage_ids = {cage_id} if cage_id else set()
        for e in rows:
            self.ends_by_cable.setdefault(e["cable_id"], []).append(e)
            if e["active"] and e["port_id"]:
                self.end_on_port[e["port_id"]] = e
            if e["active"] and e["cage_id"]:
                self.end_on_connector[(e["cage_id"], e["connector"])] = e
            if e["port_id"]:
                port_ids.add(e["port_id"])
            if e["cage_id"]:
                cage_ids.add(e["cage_id"])
        if not rows:
            return
        for p in _PORTS(sorted(port_ids), sorted(cage_ids)):
            self.remember_device(p, "device__")
            self.ports[p["id"]] = p
            if p["cage_id"] and p["retired_at"] is None:
                self.lanes.setdefault((p["cage_id"], p["connector"]), []).append(p)
        for lanes in self.lanes.values():
            lanes.sort(key=lambda p: (p["lane_start"] is None, p["lane_start"]))
        self.lane_cages = cage_ids
        for c in _CAGES(sorted(cage_ids)) if cage_ids else ():
            self.remember_device(c, "device__")
            self.cages[c.pop("id")] = c
        panel_ports = {pid for pid in port_ids if self.ports.get(pid, {}).get("kind") != PortKind.INTERFACE}
        self.mapped_ports = panel_ports
        for m in _MAPPINGS(sorted(panel_ports)) if panel_ports else ():
            self.rear_of[m["front_port_id"]] = m
            self.front_at[(m["rear_port_id"], m["rear_position"])] = m["front_port_id"]

    def remember_device(self, row: dict, prefix: str) -> None:
        self.devices[row["device_id"]] = {
            "name": row.pop(prefix + "name"),
            "rack__name": row.pop(prefix + "rack__name"),
            "position_u": row.pop(prefix + "position_u"),
        }

    def end_at(self, *, cage_id=None, connector=None, port_id=None) -> dict | None:
        hit = (
            self.end_on_port.get(port_id)
            if port_id is not None
            else self.end_on_connector.get((cage_id, connector))
        )
        if hit is not None:
            return hit
        qs = CableEnd.objects.filter(active=True)
        qs = (
            qs.filter(port_id=port_id)
            if port_id is not None
            else qs.filter(cage_id=cage_id, connector=connector)
        )
        return qs.values(*_END_COLS, *_CABLE_COLS).first()

    def other_ends(self, end: dict) -> list[dict]:
        if end["cable_id"] in self.ends_by_cable:
            return [e for e in self.ends_by_cable[end["cable_id"]] if e["side"] != end["side"]]
        return list(
            CableEnd.objects.filter(cable_id=end["cable_id"])
            .exclude(side=end["side"])
            .order_by("leg")
            .values(*_END_COLS)
        )

    def port(self, port_id: int) -> dict:
        if port_id not in self.ports:
            self.ports[port_id] = Port.objects.filter(pk=port_id).values(*_PORT_COLS).get()
        return self.ports[port_id]

    def logical_ports_on(self, cage_id: int, connector: int) -> list[dict]:
        if cage_id in self.lane_cages:
            return self.lanes.get((cage_id, connector), [])
        return list(
            Port.objects.filter(cage_id=cage_id, connector=connector, retired_at__isnull=True)
            .order_by("lane_start")
            .values(*_PORT_COLS)
        )

    def rear_mapping(self, front_port_id: int) -> dict | None:
        if front_port_id in self.mapped_ports:
            return self.rear_of.get(front_port_id)
        return (
            PortMapping.objects.filter(front_port_id=front_port_id)
            .values("front_port_id", "rear_port_id", "rear_position")
            .first()
        )

    def front_port_at(self, rear_port_id: int, position: int) -> int | None:
        if rear_port_id in self.mapped_ports:
            return self.front_at.get((rear_port_id, position))
        return (
            PortMapping.objects.filter(rear_port_id=rear_port_id, rear_position=position)
            .values_list("front_port_id", flat=True)
            .first()
        )

    def cage(self, cage_id: int) -> dict:
        if cage_id not in self.cages:
            self.cages[cage_id] = Cage.objects.filter(pk=cage_id).values(*_CAGE_COLS).get()
        return self.cages[cage_id]

    def point_for_port(self, p: dict) -> Point:
        pt = Point(
            "",
            None,
            None,
            p["name"],
            port_id=p["id"],
            cage_id=p["cage_id"],
            connector=p["connector"],
            device_id=p["device_id"],
        )
        self.points.append(pt)
        return pt

    def point_for_end(self, end: dict) -> Point:
        if end["port_id"]:
            return self.point_for_port(self.port(end["port_id"]))
        cage = self.cage(end["cage_id"])
        multi = (cage["transceiver__model__connector_count"] or 1) > 1
        name = f"{cage['name']}/{end['connector']}" if multi or (end["connector"] or 1) > 1 else cage["name"]
        pt = Point(
            "",
            None,
            None,
            name,
            cage_id=end["cage_id"],
            connector=end["connector"],
            device_id=cage["device_id"],
        )
        self.points.append(pt)
        return pt

    def socket(self, end: dict) -> tuple[str, int | None, bool | None, str]:
        if end["port_id"]:
            p = self.port(end["port_id"])
            return p["connector_type"], p["fibre_count"], p["pinned"], p["polish"]
        c = self.cage(end["cage_id"])
        return (
            c["transceiver__model__connector_type"] or "",
            c["transceiver__model__fibre_count"],
            c["transceiver__model__pinned"],
            c["transceiver__model__polish"] or "",
        )

    def mating(self, end: dict, point: Point, cable: dict) -> Mating:
        st, sf, sp, spol = self.socket(end)
        return Mating(
            where=str(point),
            cable=cable["label"],
            plug_type=end["connector_type"],
            plug_fibres=end["fibre_count"],
            plug_pinned=end["pinned"],
            plug_polish=end["polish"],
            socket_type=st,
            socket_fibres=sf,
            socket_pinned=sp,
            socket_polish=spol,
            sealed=cable["kind"] in CableKind.sealed(),
        )

    def fill_devices(self) -> None:
        devices = self.devices
        ids = {p.device_id for p in self.points if p.device_id and p.device_id not in devices}
        if ids:
            devices.update(
                (d.pop("id"), d)
                for d in Device.objects.filter(pk__in=ids).values("id", "name", "rack__name", "position_u")
            )
        for p in self.points:
            d = devices.get(p.device_id)
            if d:
                p.device, p.rack, p.u = d["name"], d["rack__name"], d["position_u"]


def port_trace(port: Port) -> Trace:
    """Follow ``port``'s cable to the logical port at the far end of the channel."""
    walk = _Walk()
    start = walk.point_for_port(
        {
            "id": port.pk,
            "device_id": port.device_id,
            "name": port.name,
            "cage_id": port.cage_id,
            "connector": port.connector,
        }
    )
    trace = Trace(start=start)
    if port.cage_id:
        walk.preload(port_id=None, cage_id=port.cage_id, connector=port.connector)
    else:
        walk.preload(port_id=port.pk, cage_id=None, connector=None)
    if port.cage_id:
        end = walk.end_at(cage_id=port.cage_id, connector=port.connector)
        siblings = walk.logical_ports_on(port.cage_id, port.connector) if end else []
        lane_index = next((i for i, p in enumerate(siblings) if p["id"] == port.pk), 0)
    else:
        end = walk.end_at(port_id=port.pk)
        lane_index = 0
    position = 1
    matings: list[Mating] = []
    fibres: list[FibreSegment] = []
    for _ in range(MAX_HOPS):
        if end is None:
            return _finish(walk, trace, matings, fibres)
        cable = {k.removeprefix("cable__"): end[k] for k in _CABLE_COLS}
        others = walk.other_ends(end)
        same_leg = next((e for e in others if end["leg"] and e["leg"] == end["leg"]), None)
        if same_leg is not None:  # a harness with legs on both sides: leg i pairs with leg i
            far = same_leg
        elif cable["role"] == CableRole.BREAKOUT and end["side"] == "A":
            far = next((e for e in others if e["leg"] == lane_index + 1), None)
            lane_index = 0
        elif cable["role"] == CableRole.BREAKOUT:
            far = others[0] if others else None
            lane_index = end["leg"] - 1
        else:
            far = others[0] if others else None
        near_point = walk.point_for_end(end)
        matings.append(walk.mating(end, near_point, cable))

        def segment(far_point: Point, far_leg: int, cable=cable, end=end, near_point=near_point) -> Segment:
            return Segment(
                end["cable_id"],
                cable["label"],
                cable["kind"],
                cable["role"],
                cable["polarity"],
                cable["status"],
                near_point,
                far_point,
                end["leg"],
                far_leg,
            )

        if far is None or not far["active"] or (far["port_id"] is None and far["cage_id"] is None):
            trace.segments.append(segment(Point("(unterminated)", None, None, "-"), far["leg"] if far else 0))
            return _finish(walk, trace, matings, fibres)
        far_point = walk.point_for_end(far)
        matings.append(walk.mating(far, far_point, cable))
        trace.segments.append(segment(far_point, far["leg"]))
        if cable["kind"] in CableKind.fibre():
            fibres.append(
                FibreSegment(cable["label"], cable["polarity"], end["fibre_count"] or far["fibre_count"])
            )
        if far["cage_id"]:
            ports = walk.logical_ports_on(far["cage_id"], far["connector"])
            if ports:
                target = ports[min(lane_index, len(ports) - 1)]
                trace.far_port_id = target["id"]
                trace.far = walk.point_for_port(target)
                trace.complete = True
            return _finish(walk, trace, matings, fibres)
        fport = walk.port(far["port_id"])
        if fport["kind"] == PortKind.INTERFACE:
            trace.far_port_id = fport["id"]
            trace.far = far_point
            trace.complete = True
            return _finish(walk, trace, matings, fibres)
        if fport["kind"] == PortKind.FRONT:
            mapping = walk.rear_mapping(fport["id"])
            if mapping is None:
                trace.verdict.fail(f"{far_point}: front port has no rear mapping")
                return _finish(walk, trace, matings, fibres)
            position = mapping["rear_position"]
            end = walk.end_at(port_id=mapping["rear_port_id"])
        else:  # rear port: the trunk brought us here at ``position``
            front = walk.front_port_at(fport["id"], position)
            if front is None:
                trace.verdict.fail(f"{far_point}: rear position {position} has no front port")
                return _finish(walk, trace, matings, fibres)
            end = walk.end_at(port_id=front)
    trace.verdict.fail(f"path longer than {MAX_HOPS} segments (a loop?)")
    return _finish(walk, trace, matings, fibres)


def _finish(walk: _Walk, trace: Trace, matings: list[Mating], fibres: list[FibreSegment]) -> Trace:
    walk.fill_devices()
    verdict = check_path(matings, fibres if trace.complete else [])
    trace.verdict.problems.extend(verdict.problems)
    trace.verdict.notes.extend(verdict.notes)
    trace.verdict.ok = trace.verdict.ok and verdict.ok
    return trace
