"""Telemetry ingest: each FEC histogram's bin layout (bin ranges and the link's correction limit)."""

from __future__ import annotations

from django.db import connection
from django.db.models import Q

from inventory.core.choices import FEC_LIMITS, FecType
from inventory.models import FecBinLayout, Link
from inventory.services.telemetry.ingest_rows import IngestRows, max_ids

# A link whose FEC is unknown or corrects nothing: its histogram bins are read against KP4's limit.
DEFAULT_CORRECTION_LIMIT = FEC_LIMITS[FecType.KP4].correctable_symbols
_link_limits: dict = {"fingerprint": None, "limits": {}}


def _correction_limits(port_ids: set[int]) -> dict[int, int]:
    """Port -> the FEC correction limit of its active link. PostgreSQL: the whole map is kept
    per process (one query per change of ``Link``, ~2 MB per 10,000 links) and checked with
    ``max_ids`` on each batch; SQLite: one query."""
    if connection.vendor != "postgresql":
        links = Link.objects.filter(
            Q(a_port_id__in=port_ids) | Q(b_port_id__in=port_ids), active=True
        ).values_list("a_port_id", "b_port_id", "fec")
    else:
        fp = max_ids(Link)
        if fp == _link_limits["fingerprint"]:
            return _link_limits["limits"]
        links = Link.objects.filter(active=True).values_list("a_port_id", "b_port_id", "fec").iterator()
    limits: dict[int, int] = {}
    for a, b, fec in links:
        fec_limit = FEC_LIMITS.get(fec)
        limits[a] = limits[b] = (fec_limit and fec_limit.correctable_symbols) or DEFAULT_CORRECTION_LIMIT
    if connection.vendor == "postgresql":
        _link_limits.update(fingerprint=fp, limits=limits)
    return limits


def layouts(rows: IngestRows) -> None:
    """Give each row with a histogram its ``FecBinLayout`` (bin ranges + correction limit)."""
    hists = rows.col("fec_hist")
    if hists is None:
        return
    with_hist = [p for p, h in enumerate(hists) if h is not None]
    need_limit = {rows.port_ids[p] for p in with_hist if rows.samples[p].fec_correction_limit is None}
    port_limit: dict[int, int] = {}
    if need_limit:
        port_limit = _correction_limits(need_limit)
    # rows share a handful of layouts: key them cheaply, build each signature once
    key_of: list[tuple] = []
    sig_of_key: dict[tuple, tuple[str, list[int], list[int], int]] = {}
    for p in with_hist:
        s = rows.samples[p]
        limit = s.fec_correction_limit or port_limit.get(rows.port_ids[p], DEFAULT_CORRECTION_LIMIT)
        key = (
            limit,
            len(s.fec_hist),
            None if s.fec_hist_bins is None else tuple(map(tuple, s.fec_hist_bins)),
        )
        key_of.append(key)
        if key not in sig_of_key:
            bins = s.fec_hist_bins or [(i, i) for i in range(len(s.fec_hist))]
            sig = f"{limit}|" + ",".join(f"{lo}-{hi}" for lo, hi in bins)
            sig_of_key[key] = (sig, [lo for lo, _ in bins], [hi for _, hi in bins], limit)
    wanted = {v[0]: v for v in sig_of_key.values()}
    known = dict(FecBinLayout.objects.filter(signature__in=list(wanted)).values_list("signature", "id"))
    for sig, (_, lows, highs, limit) in wanted.items():
        if sig not in known:
            obj, _ = FecBinLayout.objects.get_or_create(
                signature=sig, defaults={"bin_low": lows, "bin_high": highs, "correction_limit": limit}
            )
            known[sig] = obj.pk
    layout_ids: list[int | None] = [None] * len(rows)
    for p, key in zip(with_hist, key_of, strict=True):
        layout_ids[p] = known[sig_of_key[key][0]]
    rows.layout_ids = layout_ids
