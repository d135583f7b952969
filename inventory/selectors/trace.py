"""Trace a port's physical path through cables, panels and breakouts.

Topology terms: a logical ``Port`` exits through (cage, connector); a ``CableEnd`` plugs into
a cage connector or a panel port; a panel front port maps to a rear-port position, and a
trunk carries positions straight through to the far panel's rear port.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..choices import CableKind, CableRole, PortKind
from ..models import CableEnd, Port, PortMapping
from ..pathcheck import FibreSegment, Mating, PathVerdict, check_path

MAX_HOPS = 16


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


def _point_for_port(port: Port) -> Point:
    dev = port.device
    rack = dev.rack.name if dev.rack_id else None
    return Point(
        dev.name,
        rack,
        dev.position_u,
        port.name,
        port_id=port.pk,
        cage_id=port.cage_id,
        connector=port.connector,
    )


def _point_for_end(end: CableEnd) -> Point:
    if end.port_id:
        return _point_for_port(end.port)
    cage = end.cage
    dev = cage.device
    rack = dev.rack.name if dev.rack_id else None
    name = (
        cage.name
        if end.connector in (None, 1) and not _multi_connector(cage)
        else f"{cage.name}/{end.connector}"
    )
    return Point(dev.name, rack, dev.position_u, name, cage_id=cage.pk, connector=end.connector)


def _multi_connector(cage) -> bool:
    xcvr = getattr(cage, "transceiver", None)
    return bool(xcvr and xcvr.model.connector_count > 1)


_END_RELATED = (
    "cable",
    "port__device__rack",
    "cage__device__rack",
    "cage__transceiver__model",
)


def _end_at(*, cage_id=None, connector=None, port_id=None) -> CableEnd | None:
    qs = CableEnd.objects.filter(active=True).select_related(*_END_RELATED)
    if port_id is not None:
        return qs.filter(port_id=port_id).first()
    return qs.filter(cage_id=cage_id, connector=connector).first()


def _logical_ports_on(cage_id: int, connector: int) -> list[Port]:
    return list(
        Port.objects.filter(cage_id=cage_id, connector=connector, retired_at__isnull=True)
        .select_related("device__rack")
        .order_by("lane_start")
    )


def _socket_of(end: CableEnd) -> tuple[str, int | None, bool | None, str]:
    if end.port_id:
        p = end.port
        return p.connector_type, p.fibre_count, p.pinned, p.polish
    xcvr = getattr(end.cage, "transceiver", None)
    if xcvr is None:
        return "", None, None, ""
    m = xcvr.model
    return m.connector_type, m.fibre_count, m.pinned, m.polish


def _mating(end: CableEnd, point: Point) -> Mating:
    st, sf, sp, spol = _socket_of(end)
    return Mating(
        where=str(point),
        cable=end.cable.label,
        plug_type=end.connector_type,
        plug_fibres=end.fibre_count,
        plug_pinned=end.pinned,
        plug_polish=end.polish,
        socket_type=st,
        socket_fibres=sf,
        socket_pinned=sp,
        socket_polish=spol,
        sealed=end.cable.kind in CableKind.sealed(),
    )


def port_trace(port: Port) -> Trace:
    """Follow ``port``'s cable to the logical port at the far end of the channel."""
    start = _point_for_port(port)
    trace = Trace(start=start)
    if port.cage_id:
        end = _end_at(cage_id=port.cage_id, connector=port.connector)
        siblings = _logical_ports_on(port.cage_id, port.connector)
        lane_index = next((i for i, p in enumerate(siblings) if p.pk == port.pk), 0)
    else:
        end = _end_at(port_id=port.pk)
        lane_index = 0
    position = 1
    matings: list[Mating] = []
    fibres: list[FibreSegment] = []
    for _ in range(MAX_HOPS):
        if end is None:
            return _finish(trace, matings, fibres)
        cable = end.cable
        others = [e for e in cable.ends.all().select_related(*_END_RELATED) if e.side != end.side]
        if cable.role == CableRole.BREAKOUT and end.side == "A":
            far = next((e for e in others if e.leg == lane_index + 1), None)
            lane_index = 0
        elif cable.role == CableRole.BREAKOUT:
            far = others[0] if others else None
            lane_index = end.leg - 1
        else:
            far = others[0] if others else None
        near_point = _point_for_end(end)
        matings.append(_mating(end, near_point))
        if far is None or not far.active or (far.port_id is None and far.cage_id is None):
            trace.segments.append(
                Segment(
                    cable.pk,
                    cable.label,
                    cable.kind,
                    cable.role,
                    cable.polarity,
                    cable.status,
                    near_point,
                    Point("(unterminated)", None, None, "-"),
                    end.leg,
                    far.leg if far else 0,
                )
            )
            return _finish(trace, matings, fibres)
        far_point = _point_for_end(far)
        matings.append(_mating(far, far_point))
        trace.segments.append(
            Segment(
                cable.pk,
                cable.label,
                cable.kind,
                cable.role,
                cable.polarity,
                cable.status,
                near_point,
                far_point,
                end.leg,
                far.leg,
            )
        )
        if cable.kind in CableKind.fibre():
            fibres.append(FibreSegment(cable.label, cable.polarity, end.fibre_count or far.fibre_count))
        if far.cage_id:
            ports = _logical_ports_on(far.cage_id, far.connector)
            if ports:
                target = ports[min(lane_index, len(ports) - 1)]
                trace.far_port_id = target.pk
                trace.far = _point_for_port(target)
                trace.complete = True
            return _finish(trace, matings, fibres)
        fport = far.port
        if fport.kind == PortKind.INTERFACE:
            trace.far_port_id = fport.pk
            trace.far = far_point
            trace.complete = True
            return _finish(trace, matings, fibres)
        if fport.kind == PortKind.FRONT:
            mapping = (
                PortMapping.objects.filter(front_port_id=fport.pk)
                .only("rear_port_id", "rear_position")
                .first()
            )
            if mapping is None:
                trace.verdict.fail(f"{far_point}: front port has no rear mapping")
                return _finish(trace, matings, fibres)
            position = mapping.rear_position
            end = _end_at(port_id=mapping.rear_port_id)
        else:  # rear port: the trunk brought us here at ``position``
            mapping = (
                PortMapping.objects.filter(rear_port_id=fport.pk, rear_position=position)
                .only("front_port_id")
                .first()
            )
            if mapping is None:
                trace.verdict.fail(f"{far_point}: rear position {position} has no front port")
                return _finish(trace, matings, fibres)
            end = _end_at(port_id=mapping.front_port_id)
    trace.verdict.fail(f"path longer than {MAX_HOPS} segments (a loop?)")
    return trace


def _finish(trace: Trace, matings: list[Mating], fibres: list[FibreSegment]) -> Trace:
    verdict = check_path(matings, fibres if trace.complete else [])
    trace.verdict.problems.extend(verdict.problems)
    trace.verdict.notes.extend(verdict.notes)
    trace.verdict.ok = trace.verdict.ok and verdict.ok
    return trace
