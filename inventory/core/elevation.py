"""A rack elevation as drawing geometry: devices at their U, their sockets coloured by cable.

Pure: plain dataclasses in, plain dataclasses out; the template turns them into SVG. Not to
scale on purpose: a device band is at least one touch target tall (44 px) whatever its height
in U, and runs of empty U fold into one thin band ("U12-U19 free"), so a 48 U rack with a few
devices fits a phone screen or two instead of four.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WIDTH = 360  # viewBox width; the SVG scales to the column (about 336 CSS px on a 360 px phone)
BAND_MIN = 48  # one touch target (44 CSS px once the drawing is scaled to a 336 px column)
PX_PER_U = 16
FREE_BAND = 24
SOCKET = 9  # a socket's square, in viewBox units
SOCKET_GAP = 2
SOCKETS_X = 168  # sockets are drawn right of the name
LABEL_X = 8

# Worst first: a socket with two cables shows the worse one.
STATUS_RANK = ("faulty", "degraded", "planned", "installed", "tested", "in_production", "retired")


@dataclass
class Socket:
    """A cage or a cage-less port of a device, and the status of the cable in it (or None)."""

    name: str
    status: str | None = None
    has_module: bool = False
    status_text: str = ""


@dataclass
class RackDevice:
    name: str
    position_u: int
    height_u: int
    role: str
    sockets: list[Socket] = field(default_factory=list)


@dataclass
class SocketBox:
    x: int
    y: int
    css: str
    title: str


@dataclass
class Band:
    """A horizontal slice of the drawing: a device, or a run of free U."""

    y: int
    h: int
    top_u: int
    bottom_u: int
    device: RackDevice | None = None
    sockets: list[SocketBox] = field(default_factory=list)
    text_y: int = 0
    url: str = ""
    sockets_svg: str = ""  # the sockets as SVG markup, filled in by the page's selector

    @property
    def u_text(self) -> str:
        return f"U{self.bottom_u}" if self.top_u == self.bottom_u else f"U{self.bottom_u}-{self.top_u}"


@dataclass
class Elevation:
    width: int
    height: int
    bands: list[Band]
    legend: list[tuple[str, str]]


def _worst(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a or b
    rank = {s: i for i, s in enumerate(STATUS_RANK)}
    return a if rank.get(a, 99) <= rank.get(b, 99) else b


def socket_status(statuses: list[str]) -> str | None:
    """The status a socket shows when several cables (breakout legs) sit in it: the worst."""
    out = None
    for s in statuses:
        out = _worst(out, s)
    return out


def _socket_boxes(sockets: list[Socket], y0: int) -> tuple[list[SocketBox], int]:
    per_line = max(1, (WIDTH - SOCKETS_X - 6) // (SOCKET + SOCKET_GAP))
    boxes = []
    for i, s in enumerate(sockets):
        line, col = divmod(i, per_line)
        css = f"sk-{s.status}" if s.status else ("sk-module" if s.has_module else "sk-empty")
        state = s.status_text or s.status if s.status else ("module, no cable" if s.has_module else "empty")
        boxes.append(
            SocketBox(
                x=SOCKETS_X + col * (SOCKET + SOCKET_GAP),
                y=y0 + 6 + line * (SOCKET + SOCKET_GAP),
                css=css,
                title=f"{s.name}: {state}",
            )
        )
    lines = -(-len(sockets) // per_line) if sockets else 0
    return boxes, lines * (SOCKET + SOCKET_GAP) + 10


def rack_units_problem(*, rack: str, u_height: int, position_u: int | None, height_u: int) -> str | None:
    """Why a device ``height_u`` U tall cannot sit with its lowest U at ``position_u`` in a rack
    of ``u_height`` U, or None (no U: not placed, nothing to check). The elevation draws U1 to
    the rack's top: a device above it drew a band of "U52-32766 free" on the rack page. The API
    and the device CSV import ask this one function."""
    if position_u is None:
        return None
    top = u_height - height_u + 1
    if top < 1:
        return f"Rack {rack} has {u_height} U: a device {height_u} U tall does not fit in it."
    if not 1 <= position_u <= top:
        return f"Rack {rack} has {u_height} U: a device {height_u} U tall sits at U1 to U{top}, not U{position_u}."
    return None


def rack_elevation(*, u_height: int, devices: list[RackDevice]) -> Elevation:
    """Bands from the top U down; devices without a U are left out (the page lists them)."""
    placed = sorted((d for d in devices if d.position_u), key=lambda d: -(d.position_u + d.height_u - 1))
    bands: list[Band] = []
    y = 0
    next_u = max([u_height] + [d.position_u + d.height_u - 1 for d in placed])  # the U below the last band
    for d in placed:
        top = d.position_u + d.height_u - 1
        if top < next_u:
            bands.append(Band(y=y, h=FREE_BAND, top_u=next_u, bottom_u=top + 1))
            y += FREE_BAND
        if top > next_u:  # overlapping devices (bad data): draw it anyway, below the last
            top = next_u
        boxes, sockets_h = _socket_boxes(d.sockets, y)
        h = max(BAND_MIN, PX_PER_U * d.height_u, sockets_h)
        bands.append(
            Band(
                y=y,
                h=h,
                top_u=d.position_u + d.height_u - 1,
                bottom_u=d.position_u,
                device=d,
                sockets=boxes,
                text_y=y + 18,
            )
        )
        y += h
        next_u = d.position_u - 1
    if next_u >= 1:
        bands.append(Band(y=y, h=FREE_BAND, top_u=next_u, bottom_u=1))
        y += FREE_BAND
    for b in bands:
        if b.device is None:
            b.text_y = b.y + 17
    return Elevation(
        width=WIDTH,
        height=y,
        bands=bands,
        legend=[
            ("sk-in_production", "in production"),
            ("sk-degraded", "degraded"),
            ("sk-faulty", "faulty"),
            ("sk-module", "module, no cable"),
            ("sk-empty", "empty"),
        ],
    )
