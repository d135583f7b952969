"""QR matrices, fast: qrcode's layout with a fixed version and mask, filled by numpy.

``qrcode`` is the reference encoder. With a fixed version and mask it still spends most of
its time in a pure-Python Reed-Solomon division and a module-by-module placement loop
(about 400 codes/s on this 2-core machine, too slow for 1,000 labels/s). Here qrcode builds,
once per (version, error level, mask), the function patterns (finders, timing, alignment,
format and version information) and we record the order in which its placement loop visits
the data modules. Each code then costs a byte-mode bit stream, a table-driven Reed-Solomon
encoder and one numpy scatter. ``tests/inventory/labels/test_qr.py`` proves the matrices equal
qrcode's, module for module, and decodes them with zxing-cpp.

Byte mode only (no segment optimisation), so the version that fits depends only on the
length of the data: a batch of similar URLs shares one version, and one template.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import qrcode
from qrcode import base, util
from qrcode.constants import ERROR_CORRECT_H, ERROR_CORRECT_L, ERROR_CORRECT_M, ERROR_CORRECT_Q

EC_LEVELS = {"L": ERROR_CORRECT_L, "M": ERROR_CORRECT_M, "Q": ERROR_CORRECT_Q, "H": ERROR_CORRECT_H}
# Mask 2 (dark where column % 3 == 0) is a valid choice for any data: the decoder reads the
# mask from the format information. Fixing it skips qrcode's 8-way penalty search.
DEFAULT_MASK = 2

_EXP = base.EXP_TABLE
_LOG = base.LOG_TABLE


@dataclass(frozen=True)
class _Template:
    size: int
    base: np.ndarray  # uint8 matrix: function patterns set, data modules 0
    positions: np.ndarray  # flat indices of data modules, in placement order
    mask: np.ndarray  # uint8 mask bit per position
    blocks: tuple[tuple[int, int], ...]  # (data codewords, ec codewords) per RS block
    data_codewords: int
    count_bits: int


@cache
def _generator_table(ec_count: int) -> tuple[int, ...]:
    """For each feedback byte, the generator polynomial times it, as one ``ec_count``-byte int.

    The Reed-Solomon remainder is then a shift register held in a single Python int: per data
    byte one shift, one XOR and one table look-up.
    """
    poly = [1]
    for i in range(ec_count):
        root = _EXP[i % 255]
        nxt = [0] * (len(poly) + 1)
        for j, coef in enumerate(poly):
            nxt[j] ^= coef
            if coef:
                nxt[j + 1] ^= _EXP[(_LOG[coef] + _LOG[root]) % 255]
        poly = nxt
    logs = [_LOG[c] for c in poly[1:]]
    table = [0]
    for factor in range(1, 256):
        lf = _LOG[factor]
        table.append(int.from_bytes(bytes(_EXP[(lf + g) % 255] for g in logs), "big"))
    return tuple(table)


def _rs_remainder(data: list[int], ec_count: int) -> list[int]:
    table = _generator_table(ec_count)
    top = 8 * (ec_count - 1)
    mask = (1 << (8 * ec_count)) - 1
    reg = 0
    for byte in data:
        reg = ((reg << 8) & mask) ^ table[(reg >> top) ^ byte]
    return list(reg.to_bytes(ec_count, "big"))


@cache
def _template(version: int, ec_level: str, mask: int) -> _Template:
    q = qrcode.QRCode(version=version, error_correction=EC_LEVELS[ec_level], mask_pattern=mask, border=0)
    n = version * 4 + 17
    q.modules_count = n
    q.modules = [[None] * n for _ in range(n)]
    q.setup_position_probe_pattern(0, 0)
    q.setup_position_probe_pattern(n - 7, 0)
    q.setup_position_probe_pattern(0, n - 7)
    q.setup_position_adjust_pattern()
    q.setup_timing_pattern()
    q.setup_type_info(False, mask)
    if version >= 7:
        q.setup_type_number(False)
    grid = q.modules
    # Walk the data modules in qrcode's placement order (two-column zig-zag from the bottom right).
    order: list[int] = []
    row, inc = n - 1, -1
    for col in range(n - 1, 0, -2):
        if col <= 6:
            col -= 1
        while True:
            for c in (col, col - 1):
                if grid[row][c] is None:
                    order.append(row * n + c)
            row += inc
            if row < 0 or row >= n:
                row -= inc
                inc = -inc
                break
    mask_fn = util.mask_func(mask)
    base_matrix = np.array([[1 if v else 0 for v in r] for r in grid], dtype=np.uint8)
    blocks = tuple(
        (b.data_count, b.total_count - b.data_count) for b in base.rs_blocks(version, EC_LEVELS[ec_level])
    )
    return _Template(
        size=n,
        base=base_matrix,
        positions=np.array(order, dtype=np.intp),
        mask=np.array([1 if mask_fn(p // n, p % n) else 0 for p in order], dtype=np.uint8),
        blocks=blocks,
        data_codewords=sum(d for d, _ in blocks),
        count_bits=8 if version < 10 else 16,
    )


@cache
def version_for(length: int, ec_level: str = "Q") -> int:
    """The smallest version that holds ``length`` bytes in byte mode at this error level."""
    for version in range(1, 41):
        count_bits = 8 if version < 10 else 16
        capacity_bits = 8 * sum(b.data_count for b in base.rs_blocks(version, EC_LEVELS[ec_level]))
        if 4 + count_bits + 8 * length <= capacity_bits:
            return version
    raise ValueError(f"{length} bytes do not fit in a QR code at level {ec_level}")


def _codewords(data: bytes, t: _Template) -> bytes:
    # Mode 0100 (byte), character count, data, terminator, pad to a byte, pad codewords.
    bits = (0b0100 << t.count_bits) | len(data)
    nbits = 4 + t.count_bits
    value = (bits << (8 * len(data))) | int.from_bytes(data, "big")
    nbits += 8 * len(data)
    capacity = 8 * t.data_codewords
    term = min(4, capacity - nbits)
    value <<= term
    nbits += term
    if nbits % 8:
        value <<= 8 - nbits % 8
        nbits += 8 - nbits % 8
    stream = list(value.to_bytes(nbits // 8, "big"))
    pad = (0xEC, 0x11)
    stream += [pad[i % 2] for i in range(t.data_codewords - len(stream))]
    dc_blocks, ec_blocks, offset = [], [], 0
    for dc_count, ec_count in t.blocks:
        dc = stream[offset : offset + dc_count]
        offset += dc_count
        dc_blocks.append(dc)
        ec_blocks.append(_rs_remainder(dc, ec_count))
    out = []
    for blocks in (dc_blocks, ec_blocks):
        for i in range(max(len(b) for b in blocks)):
            out += [b[i] for b in blocks if i < len(b)]
    return bytes(out)


def qr_matrix(
    data: str | bytes, *, ec_level: str = "Q", version: int | None = None, mask: int = DEFAULT_MASK
):
    """The QR code of ``data`` as a square uint8 numpy array (1 = dark), without quiet zone."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    version = version or version_for(len(raw), ec_level)
    t = _template(version, ec_level, mask)
    bits = np.unpackbits(np.frombuffer(_codewords(raw, t), dtype=np.uint8))
    placed = np.zeros(len(t.positions), dtype=np.uint8)
    placed[: min(len(bits), len(placed))] = bits[: len(placed)]
    matrix = t.base.copy()
    matrix.flat[t.positions] = placed ^ t.mask
    return matrix


def qr_reference(
    data: str | bytes, *, ec_level: str = "Q", version: int | None = None, mask: int = DEFAULT_MASK
):
    """The same code built by qrcode alone (slow): the reference the fast path must equal."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    version = version or version_for(len(raw), ec_level)
    q = qrcode.QRCode(version=version, error_correction=EC_LEVELS[ec_level], mask_pattern=mask, border=0)
    q.add_data(util.QRData(raw, mode=util.MODE_8BIT_BYTE))
    q.make(fit=False)
    return np.array([[1 if v else 0 for v in r] for r in q.modules], dtype=np.uint8)
