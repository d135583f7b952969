"""Would new cables close a loop through patch panels?

A path through panels ends at a device's port (or a module's cage), or at an empty panel port.
A cable whose path, followed out of its panel ends the way the tracer follows it
(``selectors.plant.trace``: a front port to its rear port at the mapped position, a rear port at
that position to its front port, and on through the cable plugged there), comes back into the
cable itself never ends: the tracer gives up after ``MAX_HOPS`` segments, the cable page's Path
repeats the loop, and no link can be derived through it. Such a cable is refused, by the plan
import and by the single-cable install alike (this one function decides).

The walk is set-based: every new cable's walks take one step together, and each step reads the
panel mappings, the cable ends on the ports reached and those cables' other ends in three
queries for all of them, so a plan of thousands of trunks and patch cords costs a few dozen
queries, not some per row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from inventory.core.choices import PortKind
from inventory.models import CableEnd, Port, PortMapping
from inventory.selectors.plant.trace import MAX_HOPS

PANEL_KINDS = frozenset({PortKind.FRONT, PortKind.REAR})


@dataclass(frozen=True)
class PlannedEnd:
    """One plug of a cable not recorded yet: its side and leg, and the port it goes into
    (``port_id`` None: a module's cage, where a path ends)."""

    side: str
    leg: int
    port_id: int | None
    port_kind: str = PortKind.INTERFACE

    @classmethod
    def at(cls, side: str, leg: int, port) -> PlannedEnd:
        """The end on ``port`` (a ``Port``, or any row with its ``pk``, ``cage_id`` and ``kind``)."""
        if port.cage_id:
            return cls(side, leg, None)
        return cls(side, leg, port.pk, port.kind)


@dataclass(frozen=True)
class PlannedCable:
    label: str
    ends: tuple[PlannedEnd, ...]
    row: int | None = None  # its plan row, to name it in another row's refusal


@dataclass(frozen=True)
class _Plug:
    cable: tuple  # ("new", index) or ("db", cable id)
    label: str
    side: str
    leg: int
    port_id: int | None
    port_kind: str


@dataclass
class _Walker:
    start: int  # index of the new cable it walks out of
    port_id: int  # the panel port the path has reached through a cable
    position: int  # the rear position it carries (the last front-to-rear mapping's)
    hops: list = field(default_factory=list)  # ("panel", port, port) and ("cable", label) in order
    seen: set = field(default_factory=set)


def loops_closed(cables: list[PlannedCable]) -> dict[int, str]:
    """``{index in cables: why}`` for each new cable whose path through panels would come back
    into it, with the plant as recorded and the other new cables (a loop two of them close
    together is said on both, each naming the other and its row)."""
    plugs = {}  # port id -> _Plug of a new cable
    for i, c in enumerate(cables):
        for e in c.ends:
            if e.port_id is not None:
                plugs[e.port_id] = _Plug(("new", i), c.label, e.side, e.leg, e.port_id, e.port_kind)
    walk = _Plant(cables, plugs)
    starts = [
        (i, c, e)
        for i, c in enumerate(cables)
        for e in c.ends
        if e.port_kind in PANEL_KINDS and e.port_id is not None
    ]
    walk.mappings_for({e.port_id for _, _, e in starts})
    walkers = []
    for i, c, e in starts:
        positions = walk.positions(e.port_id) if e.port_kind == PortKind.REAR else [0]
        walkers += [_Walker(i, e.port_id, p, [("cable", c.label)]) for p in positions]
    found: dict[int, list] = {}
    for _ in range(MAX_HOPS):
        walkers = [w for w in walkers if w.start not in found]
        if not walkers:
            break
        walk.mappings_for({w.port_id for w in walkers})
        crossed = []
        for w in walkers:
            to = walk.across(w.port_id, w.position)
            if to is not None and (w.port_id, w.position) not in w.seen:
                w.seen.add((w.port_id, w.position))
                position = to[1] if to[1] is not None else w.position
                crossed.append((w, to[0], position))
        walk.plugs_on({port for _, port, _ in crossed})
        walkers = []
        for w, port, position in crossed:
            plug = walk.plug_on(port)
            if plug is None:
                continue  # an empty panel port: the path ends there
            hops = [*w.hops, ("panel", w.port_id, port)]
            if plug.cable == ("new", w.start):
                found.setdefault(w.start, hops)
                continue
            hops.append(("cable", _named(plug, cables)))
            for far in walk.far_ends(plug):
                if far.port_kind in PANEL_KINDS and far.port_id is not None:
                    walkers.append(_Walker(w.start, far.port_id, position, hops, w.seen))
    if not found:
        return {}
    names = walk.names({p for hops in found.values() for h in hops if h[0] == "panel" for p in h[1:]})
    return {i: _why(cables[i].label, hops, names) for i, hops in found.items()}


def _named(plug: _Plug, cables: list[PlannedCable]) -> str:
    """A cable on the loop as its refusal names it: a new one with its plan row."""
    if plug.cable[0] == "new" and cables[plug.cable[1]].row is not None:
        return f"{plug.label} (row {cables[plug.cable[1]].row})"
    return plug.label


def _why(label: str, hops: list, names: dict[int, tuple[str, str]]) -> str:
    """``L-1 would close a loop through patch panels pp-a and pp-b: from pp-a Front 2 its path
    runs pp-a Front 2 → Rear 1, T-1, pp-b Rear 1 → Front 2 and comes back into L-1. ...``"""
    said = []
    panels: set[str] = set()
    for h in hops[1:]:
        if h[0] == "cable":
            said.append(h[1])
            continue
        (device, near), (_, far) = names[h[1]], names[h[2]]
        said.append(f"{device} {near} → {far}")
        panels.add(device)
    start = f"{names[hops[1][1]][0]} {names[hops[1][1]][1]}"
    ordered = sorted(panels)
    which = " and ".join([", ".join(ordered[:-1]), ordered[-1]] if len(ordered) > 1 else ordered)
    noun = "patch panels" if len(panels) > 1 else "patch panel"
    return (
        f"{label} would close a loop through {noun} {which}: from {start} its path runs "
        f"{', '.join(said)} and comes back into {label}. "
        f"A path through panels must end at a device's port: check where {label} is plugged."
    )


class _Plant:
    """The recorded panel mappings and cable ends the walks reach, read a step at a time for all."""

    def __init__(self, cables: list[PlannedCable], new_plugs: dict[int, _Plug]) -> None:
        self.cables = cables
        self.new_plugs = new_plugs
        self.rear_of: dict[int, tuple[int, int]] = {}  # front port -> (rear port, position)
        self.front_at: dict[tuple[int, int], int] = {}  # (rear port, position) -> front port
        self.positions_of: dict[int, set[int]] = {}  # rear port -> its mapped positions
        self.mapped: set[int] = set()
        self.recorded: dict[int, _Plug | None] = {}  # port -> the active recorded end on it
        self.ends: dict[int, list[_Plug]] = {}  # recorded cable id -> its active ends

    def mappings_for(self, port_ids: set[int]) -> None:
        todo = sorted(port_ids - self.mapped)
        if not todo:
            return
        self.mapped.update(todo)
        rows = PortMapping.objects.filter(Q(front_port_id__any=todo) | Q(rear_port_id__any=todo)).values_list(
            "front_port_id", "rear_port_id", "rear_position"
        )
        for front, rear, position in rows:
            self.rear_of[front] = (rear, position)
            self.front_at[(rear, position)] = front
            self.positions_of.setdefault(rear, set()).add(position)

    def positions(self, rear_port_id: int) -> list[int]:
        return sorted(self.positions_of.get(rear_port_id, ()))

    def across(self, port_id: int, position: int) -> tuple[int, int | None] | None:
        """The port on the other side of the panel (and the position it now carries), or None."""
        if port_id in self.rear_of:
            return self.rear_of[port_id]
        front = self.front_at.get((port_id, position))
        return (front, None) if front is not None else None

    def plugs_on(self, port_ids: set[int]) -> None:
        todo = sorted(p for p in port_ids if p not in self.new_plugs and p not in self.recorded)
        if not todo:
            return
        self.recorded.update(dict.fromkeys(todo))
        on = dict(CableEnd.objects.filter(active=True, port_id__any=todo).values_list("port_id", "cable_id"))
        cable_ids = sorted(set(on.values()) - set(self.ends))
        for cable_id in cable_ids:
            self.ends[cable_id] = []
        rows = CableEnd.objects.filter(active=True, cable_id__any=cable_ids).values_list(
            "cable_id", "cable__label", "side", "leg", "port_id", "port__kind"
        )
        for cable_id, label, side, leg, port_id, kind in rows:
            self.ends[cable_id].append(
                _Plug(("db", cable_id), label, side, leg, port_id, kind or PortKind.INTERFACE)
            )
        for port_id, cable_id in on.items():
            self.recorded[port_id] = next(e for e in self.ends[cable_id] if e.port_id == port_id)

    def plug_on(self, port_id: int) -> _Plug | None:
        return self.new_plugs.get(port_id) or self.recorded.get(port_id)

    def far_ends(self, plug: _Plug) -> list[_Plug]:
        """The cable's ends on the other side: the same leg of a harness, else every one."""
        if plug.cable[0] == "new":
            c = self.cables[plug.cable[1]]
            ends = [
                _Plug(plug.cable, c.label, e.side, e.leg, e.port_id, e.port_kind)
                for e in c.ends
                if e.side != plug.side
            ]
        else:
            ends = [e for e in self.ends[plug.cable[1]] if e.side != plug.side]
        same_leg = [e for e in ends if plug.leg and e.leg == plug.leg]
        return same_leg or ends

    def names(self, port_ids: set[int]) -> dict[int, tuple[str, str]]:
        rows = Port.objects.filter(pk__any=sorted(port_ids)).values_list("pk", "device__name", "name")
        return {pk: (device, name) for pk, device, name in rows}
