"""The SOR CRC-16: which convention each instrument maker writes, checked on the real files in
``tests/data/real/sor`` (SR-4731 names CRC-16/CCITT but not the bytes it covers or the start value).

=============================  =============================================================
Maker (files)                  Convention found
=============================  =============================================================
HP E6000A, Noyes M200 (v1),    CRC-16/CCITT-FALSE (start 0xFFFF) over every byte before the
Noyes OFL280 (v2)              checksum value (v2: the "Cksum" header included), little-endian
Anritsu MT9090A, MT1000A,      CRC-16/XMODEM (start 0x0000) over every byte before the
CMA4500                        checksum value, little-endian
Viavi SmartOTDR, MTS 4000      CRC-16/CCITT-FALSE over the whole file with the value zeroed
FIBERCLOUD FC3200              writes 0000: no checksum at all
EXFO (MAX-715B, MAX-730C,      none reproducible: no CRC-16 with polynomial 0x1021 or 0x8005,
FTBx-730C/735C), OptixS        start 0 or 0xFFFF, reflected or not, either byte order, over any
                               contiguous byte range ending at a block boundary or at the value
=============================  =============================================================

So a file whose stored value one of the conventions reproduces is verified; a file of a maker whose
convention is not reproducible (EXFO, OptixS), or that stores 0000, is "not verifiable" (said on the
page, never a warning: a warning on every file of a major vendor teaches technicians to ignore it);
anything else is a mismatch (a warning: the file changed after the instrument wrote it).
"""

from __future__ import annotations

import binascii
import struct

from inventory.core.optics.sor.data import Block, Checksum

# Makers whose checksum no published CRC-16 convention reproduces, recognised by their proprietary
# blocks (EXFO leaves the supplier name empty or writes the contractor's) or their supplier name.
UNREPRODUCIBLE = {
    "EXFO": (("Exfo",), ("exfo",)),
    "OptixS": (("IITParams", "IITEvents"), ("optixs",)),
}


def unreproducible_maker(block_names: list[str], make: str) -> str:
    """The maker whose CRC convention is not reproducible that wrote this file, or ''."""
    m = (make or "").strip().lower()
    for maker, (prefixes, names) in UNREPRODUCIBLE.items():
        if any(b.startswith(prefixes) for b in block_names) or m.startswith(names):
            return maker
    return ""


def check_crc(data: bytes, blocks: list[Block], version: str, make: str = "") -> Checksum:
    """Check the stored CRC-16 against the conventions instruments write (see the module table)."""
    ck = next((b for b in blocks if b.name == "Cksum"), None)
    if ck is None:
        return Checksum(None, None, "no checksum block (optional in SR-4731)")
    at = ck.offset + (6 if version == "2.0" else 0)
    if version == "2.0" and data[ck.offset : at] != b"Cksum\0":
        return Checksum(None, False, "the checksum block is not where the block map puts it")
    if at + 2 > len(data) or at + 2 > ck.offset + ck.size:
        return Checksum(None, False, "the checksum block is empty")
    raw = data[at : at + 2]
    stored_le = struct.unpack("<H", raw)[0]
    stored_be = struct.unpack(">H", raw)[0]
    map_end = blocks[0].offset if blocks else 0
    # Chained CRCs (crc_hqx takes the running value): every range costs one pass in total.
    for init, iname in ((0xFFFF, "CCITT-FALSE"), (0x0000, "XMODEM")):
        before_block = binascii.crc_hqx(data[: ck.offset], init)
        before_value = binascii.crc_hqx(data[ck.offset : at], before_block)
        zeroed = binascii.crc_hqx(b"\0\0" + data[at + 2 :], before_value)
        after_map = binascii.crc_hqx(data[map_end:at], init)
        candidates = (
            (before_value, "bytes before the checksum value"),
            (zeroed, "whole file with the checksum zeroed"),
            (before_block, "bytes before the checksum block"),
            (after_map, "blocks after the map, before the checksum"),
        )
        for crc, rname in candidates:
            if crc == stored_le:
                return Checksum(stored_le, True, f"CRC-16/{iname} over {rname}, little-endian")
            if crc == stored_be:
                return Checksum(stored_le, True, f"CRC-16/{iname} over {rname}, big-endian")
    if stored_le == 0:
        return Checksum(0, None, "the instrument wrote no checksum (0000)")
    maker = unreproducible_maker([b.name for b in blocks], make)
    if maker:
        return Checksum(
            stored_le, None, f"not verifiable: {maker} writes a checksum no known convention reproduces"
        )
    return Checksum(stored_le, False, "matches no known CRC-16 convention")
