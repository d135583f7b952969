"""The trace: the first scale factor's data points, decimated for the plot."""

from __future__ import annotations

import numpy as np

from inventory.core.optics.sor.data import PLOT_POINTS, Block, SorFile
from inventory.core.optics.sor.fields import ByteReader, spacing_m


def read_trace(out: SorFile, data: bytes, block: Block | None, skip: int, spacing: int, index: float) -> None:
    """Read the first scale factor's points straight from the bytes (numpy, no Python lists)."""
    if block is None or not index:
        return
    d = ByteReader(data, block.offset + skip, block.offset + block.size)
    npts = d.u32()
    if d.u16() < 1:
        return
    cnt = min(d.u32(), npts)
    sf = d.u16()
    cnt = min(cnt, (d.end - d.pos) // 2)
    if cnt <= 0:
        return
    pts = np.frombuffer(data, dtype="<u2", count=cnt, offset=d.pos)
    step = spacing_m(spacing, index)
    out.trace = _decimate(pts, sf, step)
    out.range_m = cnt * step
    out.sample_spacing_m = step


def _decimate(pts: np.ndarray, scale_factor: int, step_m: float) -> list[tuple[float, float]]:
    """Reduce the trace to about ``PLOT_POINTS`` (distance m, relative dB) pairs, keeping peaks."""
    if len(pts) == 0 or step_m <= 0:
        return []
    values = pts.astype(np.float64) * (scale_factor or 1000) / 1_000_000.0
    bucket = max(1, len(values) // PLOT_POINTS)
    usable = len(values) - len(values) % bucket
    if usable == 0:
        return []
    peaks = values[:usable].reshape(-1, bucket).min(axis=1)  # smallest loss = strongest signal
    top = float(values.min())
    xs = np.round(np.arange(len(peaks)) * bucket * step_m, 2).tolist()
    ys = np.round(top - peaks, 3).tolist()
    return list(zip(xs, ys, strict=True))
