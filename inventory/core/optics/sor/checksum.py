"""The SOR CRC-16, tried under every convention instruments are known to use."""

from __future__ import annotations

import binascii
import struct

from inventory.core.optics.sor.data import Block, Checksum


def check_crc(data: bytes, blocks: list[Block], version: str) -> Checksum:
    """Try every known CRC-16 convention; say which one matched (if any)."""
    ck = next((b for b in blocks if b.name == "Cksum"), None)
    if ck is None:
        return Checksum(None, None, "no checksum block")
    at = ck.offset + (6 if version == "2.0" else 0)
    if at + 2 > len(data):
        return Checksum(None, None, "checksum block is empty")
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
    return Checksum(stored_le, False, "matches no known CRC-16 convention")
