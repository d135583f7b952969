"""The trace: the first scale factor's data points, decimated for the plot.

A plot of a 62 m data-centre link out of a 10 km acquisition would get a handful of the 600 points
if they were spread evenly, so the points are spent where the plot looks (``plot_window``: the
fibre under test, a little of the launch lead before it and of what follows): ``PLOT_POINTS``
there, a quarter of that over the rest of the range on either side.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from inventory.core.optics.sor.data import PLOT_POINTS, Block, SorFile
from inventory.core.optics.sor.fields import ByteReader, spacing_m


def read_trace(out: SorFile, data: bytes, block: Block | None, skip: int, spacing: int, index: float) -> None:
    """Read the first scale factor's points straight from the bytes (numpy, no Python lists).
    The plot points are made once the fibre's length and start are known (``plot_points``)."""
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
    out.raw_trace = (pts, sf, step)
    out.range_m = cnt * step
    out.sample_spacing_m = step


def plot_window(
    lengths: Iterable[float | None], starts: Iterable[float | None]
) -> tuple[float | None, float | None]:
    """``(since_m, until_m)``: the distances a plot of these traces shows. Until: the longest fibre
    and 15% (the OTDR's range beyond is noise). Since: the launch lead's start, but no more of it
    than a quarter of the fibre and 10 m (its far connector, the fibre's first event at 0 m, is what
    matters; 1 km of lead would squeeze a 60 m link to a sliver). None: no limit."""
    ends = [x for x in lengths if x]
    leads = [x for x in starts if x]
    if not ends:
        return None, None
    longest = max(ends)
    since = max(min(leads), -(longest * 0.25 + 10)) if leads else None
    return since, longest * 1.15 + 5


def plot_points(out: SorFile) -> None:
    """Decimate ``out.raw_trace`` into ``out.trace``: (distance m from the fibre start, relative dB)."""
    if out.raw_trace is None:
        return
    pts, sf, step = out.raw_trace
    first = out.fibre_start_offset_m or 0.0  # the first point is at the instrument
    since, until = plot_window([out.fibre_length_m], [out.fibre_start_offset_m])
    values = pts.astype(np.float64) * (sf or 1000) / 1_000_000.0
    if len(values) == 0 or step <= 0:
        return
    top = float(values.min())
    lo = 0 if since is None else int(np.clip(np.floor((since - first) / step), 0, len(values)))
    hi = len(values) if until is None else int(np.clip(np.ceil((until - first) / step) + 1, lo, len(values)))
    out.trace = [
        *_decimate(values[:lo], 0, PLOT_POINTS // 4, step, first, top),
        *_decimate(values[lo:hi], lo, PLOT_POINTS, step, first, top),
        *_decimate(values[hi:], hi, PLOT_POINTS // 4, step, first, top),
    ]


def _decimate(
    values: np.ndarray, at: int, points: int, step_m: float, first_m: float, top: float
) -> list[tuple[float, float]]:
    """About ``points`` (distance m, dB below the strongest point) pairs, keeping peaks."""
    bucket = max(1, len(values) // points)
    usable = len(values) - len(values) % bucket
    if usable == 0:
        return []
    peaks = values[:usable].reshape(-1, bucket).min(axis=1)  # smallest loss = strongest signal
    xs = np.round(first_m + (at + np.arange(len(peaks)) * bucket) * step_m, 2).tolist()
    ys = np.round(top - peaks, 3).tolist()
    return list(zip(xs, ys, strict=True))
