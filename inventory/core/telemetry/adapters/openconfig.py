"""gNMI / OpenConfig: proto-JSON notifications, gnmic output or goarista's ``gnmi get`` text; OpenConfig
leaves and SONiC hashes."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    as_float,
    as_int,
    body_json,
    body_text,
    clean,
    lane_list,
    need_device,
)
from inventory.core.telemetry.adapters.sai import map_sai_used


def _path_elems(path: Any) -> list[tuple[str, dict[str, str]]]:
    if path is None:
        return []
    if isinstance(path, dict):
        elems = path.get("elem") or path.get("elems") or []
        out = [(e.get("name", ""), dict(e.get("key") or {})) for e in elems if isinstance(e, dict)]
        if not out and path.get("element"):
            out = [(str(x), {}) for x in path["element"]]
        return out
    text = str(path).strip("/")
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "/" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        name = p.split("[", 1)[0]
        if ":" in name:
            name = name.split(":", 1)[1]
        keys = dict(re.findall(r"\[([^=\]]+)=([^\]]*)\]", p))
        out.append((name, keys))
    return out


def _flatten(elems: list[tuple[str, dict]], val: Any, out: list[tuple[list[tuple[str, dict]], Any]]) -> None:
    if isinstance(val, dict) and not ({"digits", "precision"} >= set(val) and val):
        for k, v in val.items():
            sub = _path_elems(k) if "/" in str(k) else [(str(k).split(":", 1)[-1], {})]
            _flatten(elems + sub, v, out)
    elif isinstance(val, list) and val and all(isinstance(x, dict) for x in val):
        for item in val:
            keys = {k: str(v) for k, v in item.items() if not isinstance(v, (dict, list))}
            name = elems[-1][0] if elems else ""
            _flatten([*elems[:-1], (name, keys)] if elems else [], item, out)
    else:
        if isinstance(val, dict):  # gNMI decimal64
            val = int(val["digits"]) / (10 ** int(val.get("precision", 0)))
        out.append((elems, val))


def _scalar(v: Any) -> Any:
    if isinstance(v, dict):
        # decimalVal: gNMI's decimal64 ({"digits": ..., "precision": ...}), read by _flatten
        for k in (
            "uintVal",
            "intVal",
            "floatVal",
            "doubleVal",
            "decimalVal",
            "stringVal",
            "jsonVal",
            "jsonIetfVal",
        ):
            if k in v:
                return v[k]
    return v


# Arista EOS names the transceiver component of an interface "<interface> transceiver"
# ("Ethernet49 transceiver": aristanetworks/openmgmt, gnmic examples); the sample is the interface's
_EOS_TRANSCEIVER = re.compile(r"(\S+) transceiver", re.IGNORECASE)


def _component_port(name: str) -> str:
    m = _EOS_TRANSCEIVER.fullmatch(name)
    return m.group(1) if m else name


def _oc_leaf(elems: list[tuple[str, dict]]) -> tuple[str | None, str | None, int | None]:
    """(port, field, lane) for an OpenConfig/SONiC leaf path, or Nones."""
    names = [n for n, _ in elems]
    port = None
    for n, keys in elems:
        if n == "interface" and "name" in keys:
            port = keys["name"]
        elif n == "component" and "name" in keys:
            port = _component_port(keys["name"])
    # COUNTERS/<port>/<counter>: a port only when a counter follows it (a hash at COUNTERS itself
    # is one port's, named by ?port=, not one port per counter)
    if len(names) >= 3 and names[0] == "COUNTERS":
        port = names[1]
    leaf = names[-1] if names else ""
    parent = names[-2] if len(names) >= 2 else ""
    lane = None
    for n, keys in elems:
        if n == "channel" and "index" in keys:
            lane = int(keys["index"]) if str(keys["index"]).isdigit() else None
    if leaf.startswith("SAI_") or leaf in ("FEC_PRE_BER", "FEC_POST_BER"):
        return port, "sai:" + leaf, None
    if leaf == "instant" or leaf == "avg":
        if leaf == "avg":
            return port, None, None
        return (
            port,
            {
                "input-power": "rx_power_dbm",
                "output-power": "tx_power_dbm",
                "laser-bias-current": "bias_ma",
                "temperature": "temperature_c",
                "supply-voltage": "voltage_v",
                "pre-fec-ber": "pre_fec_ber",
                "post-fec-ber": "post_fec_ber",
            }.get(parent),
            lane,
        )
    field = {
        "fec-corrected-bits": "fec_corrected_bits",
        "fec-corrected-codewords": "fec_corrected_codewords",
        "fec-corrected-blocks": "fec_corrected_codewords",
        "fec-uncorrectable-blocks": "fec_uncorrectable_codewords",
        "fec-uncorrectable-words": "fec_uncorrectable_codewords",
        "fec-uncorrectable-codewords": "fec_uncorrectable_codewords",
        "fec-symbol-errors": "fec_symbol_errors",
        "in-mac-pause-frames": "pfc_pause_rx",
        "out-mac-pause-frames": "pfc_pause_tx",
    }.get(leaf)
    if field:
        return port, field, None
    if "transceiver" in names and "state" in names:
        field = {"vendor": "module_vendor", "vendor-part": "module_part", "serial-no": "module_serial"}.get(
            leaf
        )
        if field:
            return port, field, None
    if "neighbor" in names and leaf in ("system-name", "port-id"):
        return port, "neighbor_device" if leaf == "system-name" else "neighbor_port", None
    return port, None, None


# goarista's ``gnmi get`` prints each update as its path and a colon, then the value: JSON on the
# lines below, or a scalar after the colon (``/interfaces/interface[name=Ethernet24]/state/admin-status: UP``)
_GOARISTA_PATH = re.compile(r"(/(?:[^\s\[\]]|\[[^\]\n]*\])+?):(?:[ \t]+(.*))?")


def _goarista_leaves(text: str, ts: datetime) -> list[tuple[datetime, list, Any]]:
    updates: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = _GOARISTA_PATH.fullmatch(line.rstrip())
        if m:
            updates.append((m.group(1), [m.group(2)] if m.group(2) is not None else []))
        elif updates:
            updates[-1][1].append(line)
        elif line.strip():
            raise AdapterError(f"gnmi get output: a value before any path: {line[:80]!r}")
    leaves: list[tuple[datetime, list, Any]] = []
    for path, lines in updates:
        text_value = "\n".join(lines).strip()
        try:
            value = body_json(text_value.encode())
        except AdapterError:
            if len(lines) > 1 or text_value[:1] in ("{", "["):  # JSON cut or damaged: not a scalar
                raise AdapterError(f"gnmi get output: the value of {path} is not valid JSON.") from None
            value = text_value  # a scalar printed as it is (UP, a name)
        flat: list = []
        _flatten(_path_elems(path), value, flat)
        leaves.extend((ts, e, v) for e, v in flat)
    return leaves


def parse_gnmi(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "gnmi")
    if body.lstrip()[:1] == b"/":
        leaves = _goarista_leaves(body_text(body), ctx.ts)
    else:
        leaves = _json_leaves(body, ctx.ts)
    return _samples(leaves, device, ctx)


def _json_leaves(body: bytes, default_ts: datetime) -> list[tuple[datetime, list, Any]]:
    data = body_json(body)
    messages = data if isinstance(data, list) else [data]
    leaves: list[tuple[datetime, list, Any]] = []
    for msg in messages:
        if not isinstance(msg, dict):
            raise AdapterError("gNMI JSON: expected objects.")
        notes = msg.get("notification")
        if notes is None and "update" in msg:
            notes = [msg]
        if notes is None and "updates" in msg:
            notes = [msg]
        if isinstance(notes, dict):
            notes = [notes]
        for note in notes or []:
            ts = default_ts
            raw_ts = note.get("timestamp")
            if isinstance(raw_ts, (int, str)) and str(raw_ts).isdigit() and int(raw_ts) > 0:
                ts = datetime.fromtimestamp(int(raw_ts) / 1e9, UTC)
            prefix = _path_elems(note.get("prefix"))
            for upd in note.get("update") or []:
                flat: list = []
                _flatten(prefix + _path_elems(upd.get("path")), _scalar(upd.get("val")), flat)
                leaves.extend((ts, e, v) for e, v in flat)
            for upd in note.get("updates") or []:
                base = prefix + _path_elems(upd.get("Path") or upd.get("path"))
                for k, v in (upd.get("values") or {}).items():
                    flat = []
                    # gnmic repeats the path without its keys as the value's key: keep the keyed one
                    _flatten(base or _path_elems(k), v, flat)
                    leaves.extend((ts, e, v) for e, v in flat)
    return leaves


def _samples(leaves: list[tuple[datetime, list, Any]], device: str, ctx: Context) -> list[dict]:
    if not leaves:
        raise AdapterError("No gNMI updates found.")
    samples: dict[tuple[str, datetime], dict[str, Any]] = {}
    sai: dict[tuple[str, datetime], dict[str, Any]] = {}
    lanes: dict[tuple[str, datetime, str], dict[int, float | None]] = {}
    for ts, elems, value in leaves:
        port, field, lane = _oc_leaf(elems)
        if field is None:
            ctx.report.ignore(["/".join(n for n, _ in elems)])
            continue
        port = port or ctx.port
        if not port:
            raise AdapterError("gNMI update without an interface or component name: pass ?port=.")
        key = (port, ts)
        s = samples.setdefault(key, {"device": device, "port": port, "ts": ts})
        if field.startswith("sai:"):
            sai.setdefault(key, {})[field[4:]] = value
        elif field in ("rx_power_dbm", "tx_power_dbm", "bias_ma"):
            lanes.setdefault((port, ts, field), {})[lane or 0] = as_float(value)
        elif field.startswith(("module_", "neighbor_")):
            s[field] = str(value)
        elif field in ("pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v"):
            s[field] = as_float(value)
        else:
            s[field] = as_int(value)
    for key, h in sai.items():
        fields, unused = map_sai_used(h)
        ctx.report.ignore(unused)
        samples[key].update(fields)
    for (port, ts, field), values in lanes.items():
        samples[(port, ts)][field] = lane_list(values)
    out = [clean(s) for s in samples.values()]
    if not out:
        raise AdapterError("No known OpenConfig or SONiC counters in the gNMI updates.")
    return out
