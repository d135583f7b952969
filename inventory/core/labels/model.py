"""What a label says: plain dataclasses, filled by the selector, drawn by ``pdf`` and ``zpl``.

TIA-606 practice: a label carries what does not go stale (identifier, both ends with the cage
and the port, install date, the QR code); test results live behind the QR code, on the page it
opens: a verdict and date printed on the label were wrong after the next retest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True, slots=True)
class EndInfo:
    """Where one end of a cable is plugged: rack, U, device, the cage on the faceplate (what the
    technician sees, ``OSFP1``) and the logical port (what the device calls it, ``eth0``); any
    may be unknown."""

    rack: str = ""
    u: int | None = None
    device: str = ""
    port: str = ""
    cage: str = ""

    def text(self) -> str:
        port = self.port if self.port != self.cage else ""
        parts = [self.rack, f"U{self.u}" if self.u is not None else "", self.device, self.cage, port]
        return " ".join(p for p in parts if p) or "unterminated"


@dataclass(frozen=True, slots=True)
class CableLabel:
    """One printed cable label: one per plug (both ends, and every breakout leg).

    ``identifier`` is what is printed big: the cable label, or the leg's own label.
    ``this_end`` names the plug the label goes on (``A``, ``B``, ``B1`` ...).
    """

    identifier: str
    url: str
    this_end: str
    a: EndInfo
    b: EndInfo
    installed: date | None = None


@dataclass(frozen=True, slots=True)
class RackLabel:
    name: str
    url: str
    location: str = ""  # "Site · Hall 1 · Row A"


Label = CableLabel | RackLabel
