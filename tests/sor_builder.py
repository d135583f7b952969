"""Build small synthetic SOR v1 files (Bellcore SR-4731 issue 1 layout) for tests.

Distances are turned into one-way times of flight in 100 ps units (``t = d * n / c``), the
checksum is CRC-16/CCITT-FALSE over every byte before it, as HP and Noyes v1 files do.
"""

from __future__ import annotations

import binascii
import struct
from datetime import UTC, datetime

C = 299_792_458.0


def _s(text: str) -> bytes:
    return text.encode("latin-1") + b"\0"


def build_v1(
    *,
    events: list[tuple[float, float, float | None, str]] | None = None,
    wavelength_nm: int = 1310,
    index: float = 1.4677,
    total_loss_db: float = 0.5,
    orl_db: float = 40.0,
    when: datetime | None = None,
    pulse_ns: int = 10,
    points: int = 2000,
    make: str = "Synthetic",
    serial: str = "SN-1",
) -> bytes:
    """``events``: (distance m, loss dB, reflectance dB or None, code e.g. "1F9999LS")."""
    when = when or datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    events = events if events is not None else [(0.0, 0.0, -55.0, "1F9999LS"), (80.0, 0.2, None, "1E9999LS")]
    gen = b"EN" + _s("CAB-1") + _s("1") + struct.pack("<H", wavelength_nm) + _s("A") + _s("B") + _s(" ")
    gen += b"BC" + struct.pack("<i", 0) + _s("tech") + _s(" ")
    sup = b"".join(_s(x) for x in (make, "OTDR-1", serial, "MOD-1", "MSN-1", "1.0", " "))
    spacing = 1_000  # 100 ps per 10,000 points -> 1e-11 s per point -> ~2 mm; plenty
    fxd = struct.pack("<I", int(when.timestamp())) + b"mt" + struct.pack("<H", wavelength_nm * 10)
    fxd += struct.pack("<iHH", 0, 1, pulse_ns) + struct.pack("<II", spacing * 100, points)
    fxd += struct.pack("<I", round(index * 100000)) + struct.pack("<HI", 800, 1000)
    fxd += struct.pack("<Ii", points, 0) + struct.pack("<HhHHHH", 0, 1000, 0, 50, 0, 5000)
    data = struct.pack("<IHIH", points, 1, points, 1000)
    data += struct.pack(f"<{points}H", *[min(65535, 1000 + i * 3) for i in range(points)])
    ke = struct.pack("<H", len(events))
    for i, (dist, loss, refl, code) in enumerate(events, start=1):
        t = round(dist * index / C / 1e-10)
        ke += struct.pack("<HIhhi", i, t, 350, round(loss * 1000), round((refl or 0) * 1000))
        ke += code.encode("ascii")[:8].ljust(8, b"9") + _s(" ")
    ke += struct.pack("<iIIHII", round(total_loss_db * 1000), 0, 0, round(orl_db * 1000), 0, 0)
    blocks = [
        ("GenParams", gen),
        ("SupParams", sup),
        ("FxdParams", fxd),
        ("DataPts", data),
        ("KeyEvents", ke),
    ]
    entries = b"".join(_s(n) + struct.pack("<HI", 100, len(b)) for n, b in blocks)
    entries += _s("Cksum") + struct.pack("<HI", 100, 2)
    map_size = 8 + len(entries)
    head = struct.pack("<HIH", 100, map_size, len(blocks) + 2) + entries
    body = head + b"".join(b for _, b in blocks)
    return body + struct.pack("<H", binascii.crc_hqx(body, 0xFFFF))
