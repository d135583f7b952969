"""Junos text: ``show interfaces diagnostics optics`` and ``show interfaces extensive``.

Both print one block per ``Physical interface: <name>``. From the optics block: module
temperature and voltage, per-lane bias, Tx and Rx power (a module without ``Lane N`` sections
reports one lane), the module's own alarm/warning flags (On/Off; a lane's On makes the
quantity's flag On) and thresholds. From the extensive block: ``FEC Corrected Errors`` and ``FEC Uncorrected Errors``
(codewords, cumulative). The ``... Errors Rate`` lines are per-second rates, never counters:
they are reported as ignored like every other line no sample field takes. A reading printed
twice for one port (a lane's: twice in one ``Lane N`` section) is refused, as in the XML. Junos EVO's
``PRE FEC BER`` line (a number such as ``2.0625000318741e-10``) is the pre-FEC BER; printed without
a number it is named in ignored. Not proven on a real capture: the line is known from a Juniper
engineer's script that reads it on a QFX5230 (``PRE FEC BER``, spaces, the number) and its printed value.

Hand-written, not TextFSM: ntc-templates ships no template for either command (its
``juniper_junos_show_interfaces`` template reads neither optics nor FEC lines).

The XML form (the body starts with ``<``): the ``get-interface-optics-diagnostics-information``
RPC reply (``show interfaces diagnostics optics | display xml``, what PyEZ and napalm read), one
``physical-interface`` per port with its ``optics-diagnostics``. Read: module temperature and
voltage, bias, Tx power (``laser-output-power-dbm``), Rx power (``rx-signal-avg-optical-power-dbm``
or ``laser-rx-optical-power-dbm``) as one lane, every flag (on/off) and threshold (powers from the
``...-threshold-dbm`` elements); the mW duplicates are reported as ignored, and so is the
second of two module-level Rx readings (the first is kept). A multi-lane module writes one
``optics-diagnostics-lane-values`` block per lane: ``lane-index``, ``laser-bias-current``,
``laser-output-power-dbm`` and ``laser-rx-optical-power-dbm`` fill the same lane lists the text's
``Lane N`` sections do (by index, whatever their order; a lane not sent is a gap). Junos' ``- Inf``
is a lane without a reading; other text that is no number too, and is named in ``ignored``. The
lane flags (``laser-rx-power-low-warn``, ...) fold into the module's as in the text; the laser
temperature, its flags, the mW duplicates and the status alarms (``rx-loss-of-signal-alarm``, ...)
are named in ``ignored``. A block without a lane number (or past the 16 lanes a module has), a
lane sent twice or a lane value named twice in one block is refused. Where a module writes both a
module-level reading and lanes, the lanes are kept and the module-level element is named.

A temperature comes from its ``junos:celsius`` attribute (41.1) where Junos writes one, not the
text rounded to whole degrees; a reply kept without its ``rpc-reply`` (so ``junos:`` is never
declared) is read with Junos' own prefix declared. A DOCTYPE or entity declaration is refused (the reply never carries one), so no entity expansion is ever attempted.
The same tree from ``show interfaces [extensive] | display xml`` (``interface-information``) gives
each port's ``ethernet-fec-statistics``: ``fec_ccw_count`` (corrected codewords) and
``fec_nccw_count`` (uncorrected), cumulative; their ``..._error_rate`` siblings are per-second
rates, reported as ignored. Junos EVO adds ``pre-fec-ber`` there (the pre-FEC BER) and, beside
it, one ``ethernet-fechistogram-statistics`` element per FEC histogram bin (``bin-num``,
``sym-live-err``, ``sym-harvest-err``): the bin's count is live plus harvest, the bin the codewords
with ``bin-num`` symbol errors. These names come from Juniper's own Apstra collectors for Junos EVO
``show interfaces extensive`` (MIT) and one public reader of the reply; no real reply with them was
found, so this is read from the names, not proven on a capture.

The JSON form (``| display json``, the body starts with ``{``) is the same tree written Junos'
way: every element an array of objects, its text in ``"data"``, its attributes in
``"attributes"``. It is turned back into that tree and read exactly as the XML. Junos writes a
repeated element as a repeated key (``"eth-switch-error"`` twice in one physical interface of a
vQFX), so a key named twice is read as two elements, not refused as in other JSON bodies; one
that cabletrack stores (``fec_ccw_count``, ``ethernet-fec-statistics``, ``optics-diagnostics``)
named twice in one element is refused, since the body would say two things. A CLI capture that
opens or ends with a virtual-chassis prompt line (``{master:0}``) is read without it.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from inventory.core.telemetry.adapters.common import (
    AdapterError,
    Context,
    body_text,
    clean,
    judgement_fields,
    lane_list,
    merge_flag,
    module_key,
    need_device,
    on_off,
    threshold_value,
)
from inventory.core.telemetry.decode import MAX_LANES

_BLOCK = re.compile(r"^[ \t]*Physical interface:\s*([^,\s]+)", re.M)
_LANE = re.compile(r"^\s*Lane\s+(\d+)\s*$")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][^:]*?)\s*:\s*(.*?)\s*$")
_FEC = re.compile(r"^\s*FEC (Corrected|Uncorrected) Errors\s+(\d+)\s*$")
# Junos EVO's pre-FEC BER line ("PRE FEC BER   2.0625000318741e-10"): the number as printed
_PRE_FEC_BER = re.compile(r"^\s*PRE FEC BER\s*:?\s+(\S+)\s*$", re.I)
_BER_NUMBER = re.compile(r"^\+?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$", re.A)
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /().\-]*?)(?:\s*:|\s{2,}|\s*$)")
_DBM = re.compile(r"(-?\d+(?:\.\d+)?)\s*dBm")
_FIRST = re.compile(r"(-?\d+(?:\.\d+)?)")


def _dbm(value: str) -> float | None:
    m = _DBM.search(value)
    return float(m.group(1)) if m else None


def _first(value: str) -> float | None:
    m = _FIRST.match(value)
    return float(m.group(1)) if m else None


def _digits(text: str) -> bool:
    """A count as Junos writes it: ASCII digits, at most 20 (a 64-bit counter); never ``int()`` of
    a superscript digit or of a number thousands of digits long."""
    return text.isascii() and text.isdigit() and len(text) <= 20


def _ber(text: str) -> float | None:
    """A BER as Junos prints it (``2.0625000318741e-10``, ``0``); anything else is None."""
    text = text.strip()
    return float(text) if _BER_NUMBER.match(text) else None


def _block(port: str, lines: list[str], device: str, ctx: Context) -> dict[str, Any]:
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    lanes: dict[str, dict[int, float | None]] = {"bias_ma": {}, "tx_power_dbm": {}, "rx_power_dbm": {}}
    lane = 0
    ignored: list[str] = []
    thresholds: dict[str, float | None] = {}
    flags: dict[str, bool] = {}
    said: set[tuple[str, int | None]] = set()
    section: int | None = None  # the "Lane N" section the lines are in; None before the first

    def once(label: str, *, per_lane: bool = False) -> None:
        """A reading printed twice in one block (a lane's: in one lane's section) says two things
        about one port: refused, as the XML and JSON forms refuse an element named twice. Before,
        the last one printed won."""
        what, at = " ".join(label.split()), section if per_lane else None
        if (what, at) in said:
            where = port if at is None else f"lane {at} of {port}"
            raise AdapterError(f"Junos output prints {what!r} twice for {where}: send it once.")
        said.add((what, at))

    for line in lines:
        if not line.strip():
            continue
        m = _LANE.match(line)
        if m:
            lane = section = int(m.group(1))
            if lane >= MAX_LANES:  # never a list of a billion empty lanes
                raise AdapterError(f"Junos Lane {lane} of {port}: a module has at most {MAX_LANES} lanes.")
            continue
        m = _FEC.match(line)
        if m:
            field = "fec_corrected_codewords" if m.group(1) == "Corrected" else "fec_uncorrectable_codewords"
            once(f"FEC {m.group(1)} Errors")
            s[field] = int(m.group(2))
            continue
        m = _PRE_FEC_BER.match(line)
        if m:
            once("PRE FEC BER")
            ber = _ber(m.group(1))
            if ber is None:  # "N/A" or the like: named, not dropped in silence
                ignored.append("PRE FEC BER")
            else:
                s["pre_fec_ber"] = ber
            continue
        m = _KEY_VALUE.match(line)
        key = " ".join(m.group(1).split()).lower() if m else ""
        value = m.group(2) if m else ""
        judged = module_key(key) if key else None
        if judged is not None:
            name, is_threshold = judged
            if is_threshold:
                limit = threshold_value(name, value)
                if limit is None:  # no number ("- Inf dBm"): named, not dropped in silence
                    label = _LABEL.match(line)
                    ignored.append(" ".join(label.group(1).split()) if label else line.strip()[:40])
                else:
                    thresholds[name] = limit
            else:
                merge_flag(flags, name, on_off(value))
            continue
        if key == "laser bias current":
            once(m.group(1), per_lane=True)
            lanes["bias_ma"][lane] = _first(value)
        elif key == "laser output power":
            once(m.group(1), per_lane=True)
            lanes["tx_power_dbm"][lane] = _dbm(value)
        elif key in ("receiver signal average optical power", "laser receiver power", "laser rx power"):
            once(m.group(1), per_lane=True)
            lanes["rx_power_dbm"][lane] = _dbm(value)
        elif key == "module temperature":
            once(m.group(1))
            s["temperature_c"] = _first(value)
        elif key == "module voltage":
            once(m.group(1))
            s["voltage_v"] = _first(value)
        else:
            label = _LABEL.match(line)
            ignored.append(" ".join(label.group(1).split()) if label else line.strip()[:40])
    for field, values in lanes.items():
        if values:
            s[field] = lane_list(values)
    s.update(judgement_fields(thresholds, flags))
    ctx.report.ignore(ignored)
    return clean(s)


_XML_LANE_FIELD = {
    "laser-bias-current": "bias_ma",
    "laser-output-power-dbm": "tx_power_dbm",
    "rx-signal-avg-optical-power-dbm": "rx_power_dbm",
    "laser-rx-optical-power-dbm": "rx_power_dbm",
}
_XML_MODULE_FIELD = {"module-temperature": "temperature_c", "module-voltage": "voltage_v"}
_XML_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:degrees C\b.*)?$", re.S)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _xml_number(text: str | None) -> float | None:
    """'3.3150' -> 3.315; '45 degrees C / 113 degrees F' -> 45.0; '- Inf' (no light) -> None."""
    m = _XML_NUMBER.match(text or "")
    return float(m.group(1)) if m else None


def _xml_value(el: ET.Element) -> float | None:
    """An element's number: a temperature's ``junos:celsius="41.1"`` attribute where Junos writes
    one (its text rounds to whole degrees: '41 degrees C / 106 degrees F'), else its text."""
    for name, value in el.attrib.items():
        if re.split(r"[}:]", name)[-1] == "celsius":
            return _xml_number(value)
    return _xml_number(el.text)


def _xml_judgement_key(tag: str) -> tuple[str, bool] | None:
    """'laser-tx-power-low-warn-threshold-dbm' -> ('tx_power_low_warn', True); the mW
    duplicate of a power threshold ('laser-tx-power-low-warn-threshold') -> None."""
    dbm = tag.endswith("-threshold-dbm")
    label = re.sub(r"\bwarn\b", "warning", tag.removesuffix("-dbm").replace("-", " "))
    judged = module_key(label)
    if judged is None:
        return None
    name, is_threshold = judged
    if is_threshold and name.startswith(("tx_power", "rx_power")) and not dbm:
        return None
    return judged


def _xml_judged(
    el: ET.Element, tag: str, thresholds: dict[str, float | None], flags: dict[str, bool], ignored: list[str]
) -> None:
    """A flag or threshold element into ``flags`` / ``thresholds``, anything else into ``ignored``."""
    judged = _xml_judgement_key(tag)
    if judged is None:
        ignored.append(tag)
    elif judged[1]:
        limit = _xml_value(el)
        if limit is None:  # no number ("- Inf"): named, not dropped in silence
            ignored.append(tag)
        else:
            thresholds[judged[0]] = limit
    else:
        merge_flag(flags, judged[0], on_off((el.text or "").strip()))


# Junos' "no light" reading of a power ("- Inf", "-Inf"): no number, as the text's "- Inf dBm"
_NO_LIGHT = re.compile(r"^-\s*inf$", re.I)
_LANE_VALUE_FIELD = {
    "laser-bias-current": "bias_ma",
    "laser-output-power-dbm": "tx_power_dbm",
    "laser-rx-optical-power-dbm": "rx_power_dbm",
}


def _xml_lane(
    port: str,
    block: ET.Element,
    lanes: dict[str, dict[int, float | None]],
    seen: set[int],
    thresholds: dict[str, float | None],
    flags: dict[str, bool],
    ignored: list[str],
) -> None:
    """One ``optics-diagnostics-lane-values`` block: its bias, Tx and Rx power (dBm) at its
    ``lane-index``; its flags fold into the module's as the text's lane flags do; the mW
    duplicates, the laser temperature and the status alarms are named in ``ignored``. An empty
    block says nothing and is named; one with readings but no lane number is refused."""
    if len(block) == 0:
        ignored.append("optics-diagnostics-lane-values")
        return
    index_el = _only(block, "lane-index")
    text = (index_el.text or "").strip() if index_el is not None else ""
    if not text.isdigit():
        what = f"lane-index {text[:20]!r}" if index_el is not None else "no lane-index"
        raise AdapterError(
            f"Junos optics-diagnostics-lane-values of {port} with {what}: each lane needs its number."
        )
    index = int(text)
    if index >= MAX_LANES:
        raise AdapterError(f"Junos lane-index {index} of {port}: a module has at most {MAX_LANES} lanes.")
    if index in seen:
        raise AdapterError(f"Junos output names lane {index} of {port} twice: send it once.")
    seen.add(index)
    for tag, field in _LANE_VALUE_FIELD.items():
        el = _only(block, tag)
        if el is None:
            continue
        value = _xml_number(el.text)
        if value is None and not _NO_LIGHT.match((el.text or "").strip()):
            ignored.append(tag)  # neither a number nor Junos' "- Inf": named, the lane left without it
        lanes[field][index] = value
    for el in block:
        tag = _local(el.tag)
        if tag != "lane-index" and tag not in _LANE_VALUE_FIELD:
            _xml_judged(el, tag, thresholds, flags, ignored)


def _xml_interface(port: str, diag: ET.Element, device: str, ctx: Context) -> dict[str, Any]:
    s: dict[str, Any] = {"device": device, "port": port, "ts": ctx.ts}
    thresholds: dict[str, float | None] = {}
    flags: dict[str, bool] = {}
    ignored: list[str] = []
    lanes: dict[str, dict[int, float | None]] = {"bias_ma": {}, "tx_power_dbm": {}, "rx_power_dbm": {}}
    seen: set[int] = set()
    module: list[tuple[str, str, float | None]] = []  # (tag, field, value) of a module-level reading
    for el in diag:
        tag, text = _local(el.tag), (el.text or "").strip()
        if tag == "optics-diagnostics-lane-values":
            _xml_lane(port, el, lanes, seen, thresholds, flags, ignored)
        elif tag in _XML_LANE_FIELD:
            module.append((tag, _XML_LANE_FIELD[tag], _xml_number(text)))
        elif tag in _XML_MODULE_FIELD:
            if _XML_MODULE_FIELD[tag] in s:  # two readings of one module: the body says two things
                raise AdapterError(
                    f"Junos output names {tag} twice in one {_local(diag.tag)} of {port}: send it once."
                )
            s[_XML_MODULE_FIELD[tag]] = _xml_value(el)
        else:
            _xml_judged(el, tag, thresholds, flags, ignored)
    for field, values in lanes.items():
        if values:
            s[field] = lane_list(values)
    for tag, field, value in module:
        if field in s:  # the lanes' reading, or the first of two Rx elements, is kept: this one is named
            ignored.append(tag)
        elif value is not None:
            s[field] = [value]
    s.update(judgement_fields(thresholds, flags))
    ctx.report.ignore(ignored)
    return clean(s)


_XML_FEC_FIELD = {"fec_ccw_count": "fec_corrected_codewords", "fec_nccw_count": "fec_uncorrectable_codewords"}
_HIST = "ethernet-fechistogram-statistics"
_HIST_READ = ("bin-num", "sym-live-err", "sym-harvest-err")
_MAX_BIN = 255  # the highest bin number a histogram bin range may name (decode's bound)
# what a physical-interface carries that cabletrack reads
_READ = ("name", "optics-diagnostics", "ethernet-fec-statistics", _HIST)


def _only(parent: ET.Element, tag: str) -> ET.Element | None:
    """The one child ``tag`` of ``parent`` (None when absent); named twice it is refused."""
    found = [c for c in parent if _local(c.tag) == tag]
    if len(found) > 1:
        raise AdapterError(f"Junos output names {tag} twice in one {_local(parent.tag)}: send it once.")
    return found[0] if found else None


def _fec(fec: ET.Element, sample: dict[str, Any], ctx: Context) -> None:
    for tag, field in _XML_FEC_FIELD.items():
        el = _only(fec, tag)
        if el is None:
            continue
        text = (el.text or "").strip()
        if not _digits(text):
            raise AdapterError(f"Junos {tag} is not a count: {text[:40]!r}.")
        sample[field] = int(text)
    read = set(_XML_FEC_FIELD)
    ber = _only(fec, "pre-fec-ber")
    if ber is not None:
        value = _ber(ber.text or "")
        if value is not None:  # text that is no number stays named in ignored below
            sample["pre_fec_ber"] = value
            read.add("pre-fec-ber")
    ctx.report.ignore(_local(c.tag) for c in fec if _local(c.tag) not in read)


def _count(el: ET.Element | None, port: str) -> int:
    text = (el.text or "").strip() if el is not None else "0"
    if not _digits(text):
        raise AdapterError(
            f"Junos {_local(el.tag) if el is not None else ''} of {port} is not a count: {text[:40]!r}."
        )
    return int(text)


def _histogram(bins: list[ET.Element], port: str, sample: dict[str, Any], ctx: Context) -> None:
    """Junos EVO's FEC codeword histogram: one ``ethernet-fechistogram-statistics`` element per
    bin, ``bin-num`` (codewords with that many symbol errors), ``sym-live-err`` and
    ``sym-harvest-err``; the bin's count is their sum. An element without a bin number is named
    in ignored (Junos writes such an element; Apstra's own collector filters it out)."""
    counts: dict[int, int] = {}
    for el in bins:
        ctx.report.ignore(_local(c.tag) for c in el if _local(c.tag) not in _HIST_READ)
        num = _only(el, "bin-num")
        text = (num.text or "").strip() if num is not None else ""
        if not text:
            ctx.report.ignore([f"{_HIST} without bin-num"])
            continue
        if not _digits(text) or int(text) > _MAX_BIN:
            raise AdapterError(f"Junos {_HIST} of {port}: bin-num {text[:40]!r} is not a bin number.")
        live, harvest = _only(el, "sym-live-err"), _only(el, "sym-harvest-err")
        if live is None and harvest is None:
            ctx.report.ignore([f"{_HIST} without a count"])
            continue
        if int(text) in counts:
            raise AdapterError(f"Junos {_HIST} of {port} names bin {int(text)} twice: send it once.")
        counts[int(text)] = _count(live, port) + _count(harvest, port)
    if counts:
        order = sorted(counts)
        sample["fec_hist"] = [counts[n] for n in order]
        sample["fec_hist_bins"] = [[n, n] for n in order]


def _parse_tree(root: ET.Element, ctx: Context, device: str) -> list[dict]:
    out = []
    for phys in root.iter():
        if _local(phys.tag) != "physical-interface":
            continue
        name_el = _only(phys, "name")
        name = (name_el.text or "").strip() if name_el is not None else ""
        if not name:
            raise AdapterError("Junos output: a physical-interface without a name.")
        ctx.report.ignore(_local(c.tag) for c in phys if _local(c.tag) not in _READ)
        diag, fec = _only(phys, "optics-diagnostics"), _only(phys, "ethernet-fec-statistics")
        # no optics and no FEC (a port without a module, lo0): an item with no reading, refused by itself
        sample = {"device": device, "port": name, "ts": ctx.ts}
        if diag is not None:
            sample = _xml_interface(name, diag, device, ctx)
        if fec is not None:
            _fec(fec, sample, ctx)
        _histogram([c for c in phys if _local(c.tag) == _HIST], name, sample, ctx)
        out.append(sample)
    if not out:
        raise AdapterError(
            "No physical-interface element: not a Junos get-interface-optics-diagnostics-information"
            " or interface-information reply."
        )
    return out


def _parse_xml(body: bytes, ctx: Context, device: str) -> list[dict]:
    if re.search(rb"<!(?:DOCTYPE|ENTITY)", body):
        raise AdapterError(
            "Junos XML with a DOCTYPE or entity declaration is refused (an RPC reply has none)."
        )
    try:
        root = ET.fromstring(_junos_prefix_declared(body))  # noqa: S314 -- no DOCTYPE (refused above)
    except ET.ParseError as exc:
        raise AdapterError(f"Junos XML is not well-formed: {exc}") from None
    return _parse_tree(root, ctx, device)


# the opening of the root element: after an XML declaration and comments, its tag name
_ROOT_TAG = re.compile(rb"\A\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--.*?-->\s*)*<[A-Za-z_][\w.:-]*", re.S)
_JUNOS_NS = b' xmlns:junos="http://xml.juniper.net/junos/*/junos"'


def _junos_prefix_declared(body: bytes) -> bytes:
    """The reply with Junos' own ``junos:`` prefix declared on its root when it is used but not
    declared: a collector that keeps the ``interface-information`` element of the RPC reply and
    drops the ``rpc-reply`` around it (centreon-plugins' Junos NETCONF captures) leaves
    ``junos:style`` and ``junos:celsius`` unbound. Any other undeclared prefix stays an error."""
    if b"junos:" not in body or b"xmlns:junos" in body:
        return body
    m = _ROOT_TAG.match(body[:_HEAD])
    return body[: m.end()] + _JUNOS_NS + body[m.end() :] if m else body


class _Pairs(list):
    """A JSON object as its (key, value) pairs in order, repeated keys kept (Junos repeats a key
    for a repeated element)."""


# the prompt line a CLI capture on a virtual-chassis member ends (or begins) with: "{master:0}"
_PROMPT = re.compile(r"\{(?:master|backup|linecard)(?::\d+)?\}")
_HEAD = 256  # the prompt line is looked for in the first bytes only: no scan of a whole body


def _without_prompt(body: bytes) -> bytes:
    """The body without a leading or trailing ``{master:0}`` line (split on lines, never a
    backtracking scan of the whole body)."""
    head, sep, rest = body[:_HEAD].lstrip().partition(b"\n")
    if sep and _PROMPT.fullmatch(head.strip().decode("ascii", "replace")):
        body = rest + body[_HEAD:]
    stripped = body.rstrip()
    before, sep, last = stripped.rpartition(b"\n")
    if sep and len(last) < _HEAD and _PROMPT.fullmatch(last.strip().decode("ascii", "replace")):
        body = before
    return body


def _elements(tag: str, value: Any) -> list[ET.Element]:
    """Junos JSON ``"tag": [{...}, ...]`` -> the XML elements it stands for."""
    items = value if isinstance(value, list) and not isinstance(value, _Pairs) else [value]
    out = []
    for item in items:
        el = ET.Element(tag)
        if isinstance(item, _Pairs):
            for key, sub in item:
                if key == "data":
                    el.text = None if isinstance(sub, list) else str(sub)  # [null]: an empty flag element
                elif key == "attributes":
                    if isinstance(sub, _Pairs):
                        el.attrib.update({str(k): str(v) for k, v in sub})
                else:
                    el.extend(_elements(key, sub))
        elif item is not None:
            el.text = str(item)
        out.append(el)
    return out


def _parse_json(body: bytes, ctx: Context, device: str) -> list[dict]:
    text = body_text(_without_prompt(body))
    try:
        doc = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise AdapterError(f"Junos JSON is not valid JSON: {exc}") from None
    if not isinstance(doc, _Pairs):
        raise AdapterError("Junos JSON must be an object (| display json output).")
    root = ET.Element("junos-json")
    for key, value in doc:
        root.extend(_elements(key, value))
    return _parse_tree(root, ctx, device)


def parse_junos(body: bytes, ctx: Context) -> list[dict]:
    device = need_device(ctx, "junos")
    # a text capture may open with the "{master:0}" prompt line: that is no JSON
    first = _without_prompt(body[:_HEAD]).lstrip()[:1]
    if first == b"<":
        return _parse_xml(body, ctx, device)
    if first == b"{":
        return _parse_json(body, ctx, device)
    text = body_text(body)
    heads = list(_BLOCK.finditer(text))
    if not heads:
        raise AdapterError(
            "No 'Physical interface:' block: not Junos show interfaces diagnostics optics / extensive output."
        )
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        lines = text[head.end() : end].splitlines()[1:]  # the rest of the heading line is its state
        out.append(_block(head.group(1), lines, device, ctx))
    return out
