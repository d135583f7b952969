"""What every adapter shares: the error, the request context, number and body readers."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from inventory.core.choices import FEC_LIMITS, FecType


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
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise AdapterError(f"Body is not valid JSON: {exc}") from exc


def clean(sample: dict) -> dict:
    return {k: v for k, v in sample.items() if v is not None and v != []}


def lane_list(values: dict[int, float | None]) -> list[float | None] | None:
    if not values:
        return None
    n = max(values) + 1
    return [values.get(i) for i in range(n)]


def limit_from_fec(text: str | None) -> int | None:
    if not text:
        return None
    if "544" in text:
        return FEC_LIMITS[FecType.KP4].correctable_symbols
    if "528" in text:
        return FEC_LIMITS[FecType.KR4].correctable_symbols
    return None
