"""What every adapter shares: the error, the request context, number and body readers."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from inventory.core import strictjson
from inventory.core.choices import FEC_LIMITS, FecType
from inventory.core.telemetry.decode import MAX_LANES


class AdapterError(ValueError):
    """The body cannot be read as the chosen format (a 400)."""


class Report:
    """What an adapter read in the source but did not use: source field name -> occurrences.

    Nothing is dropped in silence: every adapter names here each field of the native output
    that became no sample field (the endpoint answers them as ``ignored``; they are not stored).
    """

    __slots__ = ("ignored",)

    def __init__(self) -> None:
        self.ignored: Counter[str] = Counter()

    def ignore(self, names: Iterable[str]) -> None:
        self.ignored.update(str(n) for n in names)

    def as_dict(self) -> dict[str, Any]:
        return {"count": sum(self.ignored.values()), "fields": dict(sorted(self.ignored.items()))}


class Fields(dict):
    """A source record (name -> value) that remembers which names the adapter used, so that the
    rest can be reported as ignored (``unused``)."""

    __slots__ = ("used",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.used: set = set()

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        self.used.add(key)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self:
            self.used.add(key)
            return super().__getitem__(key)
        return default

    def use(self, *keys: Any) -> None:
        self.used.update(keys)

    def unused(self) -> list:
        return [k for k in self if k not in self.used]


@dataclass(frozen=True)
class Context:
    device: str | None
    port: str | None
    ts: datetime
    # The most samples the caller takes: an adapter that builds samples as it reads (Prometheus
    # text) stops at the first one over it, so a huge body never materialises. None: no cap.
    max_items: int | None = None
    # The source fields the adapter did not use (filled while parsing).
    report: Report = field(default_factory=Report, compare=False, repr=False)


def as_number(v: Any) -> float | int | None:
    """'136,403' -> 136403; '1.18e-12' -> float; 'N/A' / '' -> None."""
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    s = str(v).strip().replace(",", "")
    if not s or s.upper() in ("N/A", "NA", "-", "NONE"):
        return None
    try:
        return int(s)
    except ValueError:
        pass
    try:
        f = float(s)
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def as_int(v: Any) -> int | None:
    n = as_number(v)
    if n is None:
        return None
    if isinstance(n, float):
        return int(n) if n.is_integer() else None
    return n


def as_float(v: Any) -> float | None:
    n = as_number(v)
    return None if n is None else float(n)


def need_device(ctx: Context, fmt: str) -> str:
    if not ctx.device:
        raise AdapterError(f"{fmt} output does not name the device: pass ?device= (or X-Cabletrack-Device).")
    return ctx.device


def need_port(ctx: Context, fmt: str) -> str:
    if not ctx.port:
        raise AdapterError(f"{fmt} output does not name the port: pass ?port= (or X-Cabletrack-Port).")
    return ctx.port


def body_text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AdapterError(f"Body is not UTF-8 text: {exc}") from exc


def body_json(body: bytes) -> Any:
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise AdapterError(f"Body is not valid JSON: {exc}") from exc
    key = strictjson.duplicate_key(body)
    if key is not None:
        raise AdapterError(strictjson.duplicate_message(key))
    return doc


def clean(sample: dict) -> dict:
    return {k: v for k, v in sample.items() if v is not None and v != []}


def lane_list(values: dict[int, float | None]) -> list[float | None] | None:
    """Lane number -> reading, as a list with gaps None. A lane number past what a module has
    ('(Channel 1000000000)', 'RX99999999Power') gives a list one lane too long, which the sample's
    bound refuses as that item's error: never a list of a billion empty lanes."""
    if not values:
        return None
    n = min(max(values) + 1, MAX_LANES + 1)
    return [values.get(i) for i in range(n)]


def limit_from_fec(text: str | None) -> int | None:
    if not text:
        return None
    if "544" in text:
        return FEC_LIMITS[FecType.KP4].correctable_symbols
    if "528" in text:
        return FEC_LIMITS[FecType.KR4].correctable_symbols
    return None


# The module's own judgement (SFF-8472, SFF-8636, CMIS): its alarm/warning flags and thresholds.
# Keys: ``<quantity>_<level>``, quantity temperature (C), voltage (V), bias (mA), tx_power and
# rx_power (dBm); level high_alarm, low_alarm, high_warn, low_warn.
_FLAG_QUANTITY = (
    ("laser bias current", "bias"),
    ("laser tx bias current", "bias"),
    ("laser output power", "tx_power"),
    ("laser tx power", "tx_power"),
    ("laser rx power", "rx_power"),
    ("laser receiver power", "rx_power"),
    ("module temperature", "temperature"),
    ("module voltage", "voltage"),
)
_FLAG_LABEL = re.compile(
    r"^(?P<what>[a-z ]+?)\s+(?P<side>high|low)\s+(?P<kind>alarm|warning)(?P<threshold>\s+threshold)?"
    r"\s*(?:\((?:channel|chan|lane)\s*\d+\))?$"
)


def module_key(label: str) -> tuple[str, bool] | None:
    """An ``ethtool -m`` / Junos optics label -> (key, is a threshold), or None.
    'Laser bias current high alarm   (Chan 1)' -> ('bias_high_alarm', False);
    'Laser rx power low warning threshold' -> ('rx_power_low_warn', True)."""
    m = _FLAG_LABEL.match(" ".join(label.split()).lower())
    if not m:
        return None
    quantity = dict(_FLAG_QUANTITY).get(m.group("what"))
    if quantity is None:
        return None
    level = f"{m.group('side')}_{'alarm' if m.group('kind') == 'alarm' else 'warn'}"
    return f"{quantity}_{level}", bool(m.group("threshold"))


def on_off(value: str) -> bool | None:
    v = value.strip().lower()
    return True if v == "on" else False if v == "off" else None


def merge_flag(flags: dict[str, bool], key: str, on: bool | None) -> None:
    """Per-lane flags fold into one per quantity and level: On when any lane's is On."""
    if on is not None:
        flags[key] = flags.get(key, False) or on


_DBM_VALUE = re.compile(r"(-?[\d.]+|-inf)\s*dBm")
_FIRST_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)")


def threshold_value(key: str, value: str) -> float | None:
    """A threshold as printed ('0.7079 mW / -1.50 dBm', '75.00 degrees C / 167.00 degrees F',
    '3.6300 V', '110.000 mA') in the key's unit: dBm for powers (-inf dBm: none set)."""
    if key.startswith(("tx_power", "rx_power")):
        m = _DBM_VALUE.search(value)
        return None if not m or m.group(1) == "-inf" else float(m.group(1))
    m = _FIRST_NUMBER.match(value)
    return float(m.group(1)) if m else None


def judgement_fields(thresholds: dict[str, float | None], flags: dict[str, bool]) -> dict[str, Any]:
    """The sample fields of the module's own judgement (and the three thresholds the rules read)."""
    kept = {k: v for k, v in thresholds.items() if v is not None}
    return {
        "module_thresholds": kept or None,
        "module_flags": flags or None,
        "rx_power_low_warn_dbm": kept.get("rx_power_low_warn"),
        "rx_power_low_alarm_dbm": kept.get("rx_power_low_alarm"),
        "temperature_high_warn_c": kept.get("temperature_high_warn"),
    }
