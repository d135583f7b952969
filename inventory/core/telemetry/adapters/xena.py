"""Xena ``PP_RXFECSTATS`` lines: codeword histogram, uncorrectable and total codewords."""

from __future__ import annotations

from inventory.core.telemetry.adapters.common import AdapterError, Context, body_text, need_device


def parse_xena(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "xena")
    out = []
    for line in body_text(body).splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[1].upper() != "PP_RXFECSTATS":
            continue
        count = int(parts[3])
        values = [int(x) for x in parts[4:]]
        if len(values) != count or count < 3:
            raise AdapterError(f"PP_RXFECSTATS declares {count} values but has {len(values)}.")
        bins, uncorrectable = values[: count - 2], values[count - 2]
        out.append(
            {
                "device": device,
                "port": ctx.port or parts[0],
                "ts": ctx.ts,
                "fec_hist": bins,
                "fec_correction_limit": len(bins) - 1,
                "fec_uncorrectable_codewords": uncorrectable,
                "fec_corrected_codewords": sum(bins[1:]),
            }
        )
    if not out:
        raise AdapterError("No PP_RXFECSTATS line found.")
    return out
