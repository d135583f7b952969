"""InfiniBand ``perfquery`` counters, one sample per port block."""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    as_int,
    body_text,
    clean,
    need_device,
)

_PERFQUERY = {
    "SymbolErrorCounter": "ib_symbol_errors",
    "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_down_events",
}


def parse_perfquery(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "perfquery")
    blocks: list[tuple[str, dict[str, Any]]] = []
    for line in body_text(body).splitlines():
        m = re.match(r"\s*#.*\bport\s+(\d+)", line, re.IGNORECASE)
        if m:
            blocks.append((m.group(1), {}))
            continue
        m = re.match(r"\s*([A-Za-z0-9_]+):\.*\s*(\S+)\s*$", line)
        if m:
            if not blocks:
                blocks.append(("", {}))
            blocks[-1][1][m.group(1)] = m.group(2)
        elif line.strip() and not line.lstrip().startswith("#"):
            ctx.report.ignore([line.strip()[:60]])  # a line of no known shape: named, not skipped
    if not blocks:
        raise AdapterError("No perfquery counters found.")
    out = []
    for num, counters in blocks:
        num = num or str(counters.get("PortSelect", ""))
        if ctx.port and ("{port}" in ctx.port or len(blocks) == 1):
            port = ctx.port.replace("{port}", num)
        elif num:
            port = num
        else:
            raise AdapterError("perfquery output without a port number: pass ?port=.")
        s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
        for key, field in _PERFQUERY.items():
            if key in counters:
                s[field] = as_int(counters[key])
        # PortSelect and CounterSelect name the port and the selection: not readings
        ctx.report.ignore(
            k for k in counters if k not in _PERFQUERY and k not in ("PortSelect", "CounterSelect")
        )
        out.append(clean(s))
    return out
