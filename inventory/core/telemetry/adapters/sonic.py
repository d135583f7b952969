"""SONiC: COUNTERS_DB hashes (JSON or ``redis-cli`` text) and the ``show interfaces counters fec-*`` tables."""

from __future__ import annotations

import re
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    as_float,
    as_int,
    body_json,
    body_text,
    clean,
    need_device,
)
from inventory.core.telemetry.adapters.openconfig import parse_gnmi
from inventory.core.telemetry.adapters.sai import map_sai_used


def _redis_text(text: str) -> list[tuple[str | None, dict[str, str]]]:
    """``redis-cli hgetall KEY`` listings -> [(oid or key, hash)], port-name lookups applied."""
    hashes: list[tuple[str | None, dict[str, str]]] = []
    names: dict[str, str] = {}
    pending_name: str | None = None
    items: list[str] = []
    key: str | None = None

    def flush():
        if items:
            pairs = dict(zip(items[0::2], items[1::2], strict=False))
            if key == "COUNTERS_PORT_NAME_MAP":  # ``hgetall COUNTERS_PORT_NAME_MAP``: port name -> oid
                names.update({oid: name for name, oid in pairs.items()})
            else:
                hashes.append((key, pairs))

    for line in text.splitlines():
        cmd = re.search(
            r"redis-cli\b.*?\b(hgetall|hget)\s+\"?([^\"\s]+)\"?(?:\s+\"?([^\"\s]+)\"?)?", line, re.I
        )
        if cmd:
            flush()
            items = []
            key = None
            if cmd.group(1).lower() == "hget" and cmd.group(2) == "COUNTERS_PORT_NAME_MAP":
                pending_name = cmd.group(3)
            else:
                pending_name = None
                m = re.search(r"(oid:0x[0-9a-fA-F]+)", cmd.group(2))
                key = m.group(1) if m else cmd.group(2)
            continue
        m = re.match(r"\s*\d+\)\s+\"(.*)\"\s*$", line)
        if m:
            items.append(m.group(1))
            continue
        m = re.match(r"\s*\"(oid:0x[0-9a-fA-F]+)\"\s*$", line)
        if m and pending_name:
            names[m.group(1)] = pending_name
            pending_name = None
    flush()
    return [(names.get(k or "") if k and k.startswith("oid:") else k, h) for k, h in hashes]


def parse_sonic_counters(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "sonic-counters")
    stripped = body.lstrip()
    if stripped[:1] in (b"{", b"["):
        data = body_json(body)
        if isinstance(data, dict) and "notification" in data or isinstance(data, list):
            return parse_gnmi(body, ctx)
        # a body starting with "{" is an object: a hash of SAI names, or hashes keyed by port
        if any(str(k).startswith("SAI_") for k in data):
            hashes = [(None, data)]
        else:
            hashes = [(k, v) for k, v in data.items() if isinstance(v, dict)]
    else:
        hashes = _redis_text(body_text(body))
    out = []
    for name, h in hashes:
        port = name if name and not name.startswith(("oid:", "RATES", "COUNTERS")) else ctx.port
        if not port:
            raise AdapterError(
                "COUNTERS_DB hash without a port name: pass ?port= or include the port name map."
            )
        fields, unused = map_sai_used(h)
        ctx.report.ignore(unused)
        out.append(clean({"device": device, "port": port, "ts": ctx.ts, **fields}))
    if not out:
        raise AdapterError("No COUNTERS_DB hashes found.")
    return out


_CLI_COLUMNS = {
    "FEC_CORR": "fec_corrected_codewords",
    "FEC_UNCORR": "fec_uncorrectable_codewords",
    "FEC_SYMBOL_ERR": "fec_symbol_errors",
    "FEC_PRE_BER": "pre_fec_ber",
    "FEC_POST_BER": "post_fec_ber",
}


_PERIOD = re.compile(r"The rates are calculated within (\d+) seconds? period")


def parse_sonic_cli(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "sonic-cli")
    text = body_text(body)
    period = _PERIOD.search(text)
    if period:
        # ``-p N`` prints what the counters added in N seconds, not the counters: read as
        # cumulative they would be counters of (nearly) 0, a reset to the rate maths
        raise AdapterError(
            f"This is a SONiC period output (show ... -p {period.group(1)}: the increase of each counter "
            f"over {period.group(1)} s, not the counters since the last clear). cabletrack needs the "
            "counters: post the output without -p."
        )
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cols = re.split(r"\s{2,}", line.strip())
        if cols and cols[0] == "IFACE":
            out = []
            for row in lines[i + 1 :]:
                cells = re.split(r"\s{2,}", row.strip())
                if not row.strip() or set(row.strip()) <= {"-", " "}:
                    continue
                if len(cells) < 2:
                    continue
                s: dict[str, Any] = {"device": device, "port": cells[0], "ts": ctx.ts}
                for name, cell in zip(cols[1:], cells[1:], strict=False):
                    field = _CLI_COLUMNS.get(name)
                    if field:
                        s[field] = as_float(cell) if field.endswith("_ber") else as_int(cell)
                    else:
                        ctx.report.ignore([name])
                out.append(clean(s))
            return out
        if re.match(r"\s*Symbol Errors Per Codeword", line):
            port = ctx.port
            for prev in lines[:i]:
                m = re.search(r"fec-histogram\s+(\S+)", prev)
                if m:
                    port = m.group(1)
            if not port:
                raise AdapterError("fec-histogram output without the interface: pass ?port=.")
            bins = {}
            for row in lines[i + 1 :]:
                m = re.match(r"\s*BIN(\d+)\s+(\d+)", row)
                if m:
                    bins[int(m.group(1))] = int(m.group(2))
            if not bins:
                raise AdapterError("fec-histogram output without BIN rows.")
            return [
                {
                    "device": device,
                    "port": port,
                    "ts": ctx.ts,
                    "fec_hist": [bins.get(i, 0) for i in range(max(bins) + 1)],
                }
            ]
    raise AdapterError("No 'IFACE' fec-stats table or fec-histogram found in SONiC CLI output.")
