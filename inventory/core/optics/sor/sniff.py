"""Is this a SOR file at all: magic bytes, HTML saved as .sor, size cap, the block map, truncation."""

from __future__ import annotations

import struct

from inventory.core.optics.sor.data import DEFAULT_MAX_BYTES, Block, SorError

_MAGIC = {
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a zip archive (upload the .sor files inside it, or use the tester project import)",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"\x1f\x8b": "a gzip archive",
}


def _map_entries(data: bytes, start: int, count: int, map_size: int) -> list[tuple[str, int, int]]:
    pos = start
    out = []
    for _ in range(count - 1):
        end = data.find(b"\0", pos, min(pos + 64, map_size))
        if end < 0 or end + 7 > map_size:
            raise SorError("The block map is damaged: a block name does not end where the map says.")
        try:
            name = data[pos:end].decode("ascii")
        except UnicodeDecodeError:
            raise SorError("The block map is damaged: a block name is not text.") from None
        rev, size = struct.unpack_from("<HI", data, end + 1)
        out.append((name, rev, size))
        pos = end + 7
    return out


def sniff(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[str, list[Block], int]:
    """Say whether ``data`` is a SOR file: ``(version, blocks, map_size)`` or :class:`SorError`."""
    if len(data) == 0:
        raise SorError("The file is empty.")
    if len(data) > max_bytes:
        raise SorError(f"The file is {len(data):,} bytes, over the {max_bytes:,}-byte limit for OTDR files.")
    head = data[:1024].lstrip().lower()
    if head.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body")) or b"<html" in head[:512]:
        raise SorError(
            "This is a web page (HTML), not an OTDR file; it was probably saved from a browser "
            "under a .sor name. Export the .sor from the instrument or its software."
        )
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            raise SorError(f"This is {what}, not an OTDR .sor file.")
    if len(data) < 16:
        raise SorError(f"The file is only {len(data)} bytes: too short to be an OTDR file (truncated?).")
    if data.startswith(b"Map\0"):
        version = "2.0"
        rev, map_size, count = struct.unpack_from("<HIH", data, 4)
        first = 12
    else:
        rev, map_size, count = struct.unpack_from("<HIH", data, 0)
        first = 8
        if not (100 <= rev < 200 and data[first : first + 9] == b"GenParams"):
            raise SorError(
                "This is not a Bellcore/Telcordia SR-4731 (.sor) OTDR file: it does not start with "
                "the block map every SOR file begins with."
            )
        version = "1.x"
    if not 2 <= count <= 200 or map_size < first or map_size > len(data):
        if map_size > len(data):
            raise SorError(
                f"The file is truncated: its block map alone needs {map_size:,} bytes but the file has "
                f"{len(data):,}."
            )
        raise SorError("The block map is damaged (impossible block count or size).")
    entries = _map_entries(data, first, count, map_size)
    blocks: list[Block] = []
    offset = map_size
    for name, brev, size in entries:
        blocks.append(Block(name, brev, size, offset))
        offset += size
    if offset > len(data):
        raise SorError(
            f"The file is truncated: its blocks add up to {offset:,} bytes but only {len(data):,} "
            "arrived. Copy the file again from the instrument."
        )
    names = {b.name for b in blocks}
    missing = [n for n in ("GenParams", "FxdParams") if n not in names]
    if "KeyEvents" not in names and "DataPts" not in names:
        missing.append("KeyEvents or DataPts")  # a trace without events is readable; nothing at all is not
    if missing:
        raise SorError(f"The file has no {', '.join(missing)} block, so it holds no usable OTDR result.")
    return version, blocks, map_size
