"""SONiC COUNTERS_DB / RATES names (``SAI_PORT_STAT_*``) -> sample fields, shared by the SONiC and gNMI adapters."""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import Fields, as_float, as_int


def map_sai_used(stats: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(sample fields, the hash's names not used). PFC pause time: the SAI counter
    ``SAI_PORT_STAT_PFC_N_RX_PAUSE_DURATION_US`` where the ASIC has one, else SONiC's estimate
    from the PFC state transitions (``EST_PORT_STAT_PFC_N_RX_PAUSE_DURATION_US``, written by
    the PFC historical statistics)."""
    original = {(k[:-5] if k.endswith("_last") else k): k for k in stats}
    norm = Fields({(k[:-5] if k.endswith("_last") else k): v for k, v in stats.items()})
    s: dict[str, Any] = {}
    for key, field in (
        ("SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES", "fec_corrected_codewords"),
        ("SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES", "fec_uncorrectable_codewords"),
        ("SAI_PORT_STAT_IF_FEC_NOT_CORRECTABLE_FARMES", "fec_uncorrectable_codewords"),  # SONiC's spelling
        ("SAI_PORT_STAT_IF_FEC_NOT_CORRECTABLE_FRAMES", "fec_uncorrectable_codewords"),
        ("SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS", "fec_symbol_errors"),
        ("SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS", "fec_corrected_bits"),
        ("SAI_PORT_STAT_IF_FEC_CORRECTED_BITS", "fec_corrected_bits"),
    ):
        if key in norm and field not in s:
            s[field] = as_int(norm[key])
    for key, field in (("FEC_PRE_BER", "pre_fec_ber"), ("FEC_POST_BER", "post_fec_ber")):
        if key in norm:
            s[field] = as_float(norm[key])
    bins = {
        int(m.group(1)): as_int(norm[k])
        for k in list(norm)
        if (m := re.fullmatch(r"SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S(\d+)", k))
    }
    if bins:
        s["fec_hist"] = [bins.get(i) or 0 for i in range(max(bins) + 1)]
    for direction in ("RX", "TX"):
        pkts = [
            as_int(norm[k]) or 0
            for k in list(norm)
            if re.fullmatch(rf"SAI_PORT_STAT_PFC_\d_{direction}_PKTS", k)
        ]
        if pkts:
            s[f"pfc_pause_{direction.lower()}"] = sum(pkts)
    for prefix in ("SAI", "EST"):
        dur = [
            as_int(norm[k]) or 0
            for k in list(norm)
            if re.fullmatch(rf"{prefix}_PORT_STAT_PFC_\d_RX_PAUSE_DURATION_US", k)
        ]
        if dur:
            s["pfc_pause_duration_us"] = sum(dur)
            break
    return s, [original[k] for k in norm.unused()]
