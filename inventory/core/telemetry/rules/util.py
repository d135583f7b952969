"""Small helpers the rules share: bucket counts, per-row profile values, evidence numbers and series."""

from __future__ import annotations

import math

import numpy as np

from inventory.core.telemetry.rules.config import Thresholds


def bucket_count(window_s: float, bucket_s: float, b: int) -> int:
    """How many of the ``b`` buckets of ``bucket_s`` seconds cover ``window_s`` (at least one)."""
    return max(1, min(b, math.ceil(window_s / bucket_s - 1e-9)))


def profile_values(profiles: list[Thresholds], row_profile: np.ndarray, attr: str, none=np.nan):
    """One threshold per row: ``attr`` of each row's profile (``none`` where it is switched off)."""
    vals = np.array([none if getattr(p, attr) is None else getattr(p, attr) for p in profiles], dtype=float)
    return vals[row_profile]


def fmt_sci(x: float) -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:.2e}"


def json_number(x: float) -> float | None:
    """A JSON-safe number: NaN (unknown) becomes None."""
    return float(x) if np.isfinite(x) else None


def short_series(row: np.ndarray, points: int = 12) -> list[float | None]:
    """A short series (for evidence): the row downsampled to ``points`` by bucket means."""
    if row.size == 0:
        return []
    chunks = np.array_split(row, min(points, row.size))
    out = []
    for c in chunks:
        c = c[np.isfinite(c)]
        out.append(float(c.mean()) if c.size else None)
    return out


def tail_split(bins: list[tuple[int, int, float]], correction_limit: int) -> tuple[float, float]:
    """Codewords in the warning (40-80% of T) and critical (> 80% of T) histogram bins.

    ``bins`` are (bin_low, bin_high, count) in symbol errors per codeword, as ethtool reports
    them; a bin counts by its lower edge.
    """
    if correction_limit <= 0:
        return 0.0, 0.0
    warn = crit = 0.0
    lo_warn, lo_crit = 0.4 * correction_limit, 0.8 * correction_limit
    for lo, _hi, count in bins:
        if count is None:
            continue
        if lo > lo_crit:
            crit += count
        elif lo >= lo_warn:
            warn += count
    return warn, crit
