"""Decode and validate telemetry batches (``{"samples": [...]}`` JSON or NDJSON).

msgspec does the decoding and type checks (about 400,000 items/s); a whole batch is decoded
in one call, and only when that fails is it decoded again item by item, so one bad item costs
the batch nothing but its own error. Every error names the item's index.

Pure: no ORM. Port resolution and storage are in ``inventory.services.telemetry.ingest``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from itertools import chain, islice
from operator import attrgetter, methodcaller
from typing import Annotated, Any

import msgspec

from inventory.core import strictjson
from inventory.core.safetext import has_control
from inventory.core.telemetry.dom import DOM_FIELDS, MODULE_KEYS, SUPPLY_V, dom_suspect_reasons

U64_MAX = (1 << 64) - 1
MAX_LANES = 16
MAX_BINS = 64

U64 = Annotated[int, msgspec.Meta(ge=0)]  # the 2**64-1 bound is checked in _check (msgspec caps at int64)
Count = Annotated[int, msgspec.Meta(ge=0, le=(1 << 63) - 1)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Ident = Annotated[str, msgspec.Meta(max_length=100)]
Lanes = Annotated[list[float | None], msgspec.Meta(max_length=MAX_LANES)]
TsType = Annotated[datetime, msgspec.Meta(tz=True)] | float

# Counters are cumulative since the device's last clear (unsigned 64-bit).
COUNTER_FIELDS = (
    "fec_corrected_codewords",
    "fec_uncorrectable_codewords",
    "fec_corrected_bits",
    "fec_symbol_errors",
    "rx_bits",
    "ib_symbol_errors",
    "pfc_pause_rx",
    "pfc_pause_tx",
    "pfc_pause_duration_us",
    "link_down_events",
    "link_error_recovery",
)
GAUGE_FIELDS = ("pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v")
# The link as trained: speed (Gb/s) and width (lanes in use); below the link's recorded speed
# or lanes it is degraded (rule ``link_degraded``).
LINK_FIELDS = ("speed_gbps", "link_width")
LANE_FIELDS = ("rx_power_dbm", "tx_power_dbm", "bias_ma")
IDENTITY_FIELDS = ("module_vendor", "module_part", "module_serial", "neighbor_device", "neighbor_port")
# The module's own DOM thresholds (from its EEPROM), kept with the port's identity state.
THRESHOLD_FIELDS = ("rx_power_low_warn_dbm", "rx_power_low_alarm_dbm", "temperature_high_warn_c")
# The module's own judgement, kept with the port's state (latest).
JUDGEMENT_FIELDS = ("module_thresholds", "module_flags", "dom_suspect")


class Sample(msgspec.Struct, omit_defaults=True, gc=False):
    """One sample as posted. Every field but ``device``, ``port`` and ``ts`` is optional.

    ``ts``: RFC 3339 with a timezone, or seconds since the Unix epoch. Unknown fields are
    ignored (collectors may send more than we store). ``gc=False``: a sample holds no cycles,
    and keeping 5,000 of them out of the cyclic collector's sight keeps a batch from
    triggering full collections.
    """

    device: Name
    port: Name
    ts: TsType
    fec_corrected_codewords: U64 | None = None
    fec_uncorrectable_codewords: U64 | None = None
    fec_corrected_bits: U64 | None = None
    fec_symbol_errors: U64 | None = None
    rx_bits: U64 | None = None
    ib_symbol_errors: U64 | None = None
    pfc_pause_rx: U64 | None = None
    pfc_pause_tx: U64 | None = None
    pfc_pause_duration_us: U64 | None = None
    link_down_events: U64 | None = None
    link_error_recovery: U64 | None = None
    fec_hist: Annotated[list[Count], msgspec.Meta(max_length=MAX_BINS)] | None = None
    fec_hist_bins: (
        Annotated[
            list[
                tuple[Annotated[int, msgspec.Meta(ge=0, le=255)], Annotated[int, msgspec.Meta(ge=0, le=255)]]
            ],
            msgspec.Meta(max_length=MAX_BINS),
        ]
        | None
    ) = None
    fec_correction_limit: Annotated[int, msgspec.Meta(ge=1, le=255)] | None = None
    pre_fec_ber: Annotated[float, msgspec.Meta(ge=0, le=1)] | None = None
    post_fec_ber: Annotated[float, msgspec.Meta(ge=0, le=1)] | None = None
    temperature_c: Annotated[float, msgspec.Meta(ge=-100, le=250)] | None = None
    voltage_v: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None
    speed_gbps: Annotated[float, msgspec.Meta(ge=0, le=100_000)] | None = None
    link_width: Annotated[int, msgspec.Meta(ge=0, le=64)] | None = None
    bias_ma: float | Lanes | None = None
    rx_power_dbm: float | Lanes | None = None
    tx_power_dbm: float | Lanes | None = None
    rx_power_low_warn_dbm: Annotated[float, msgspec.Meta(ge=-100, le=100)] | None = None
    rx_power_low_alarm_dbm: Annotated[float, msgspec.Meta(ge=-100, le=100)] | None = None
    temperature_high_warn_c: Annotated[float, msgspec.Meta(ge=-100, le=250)] | None = None
    module_vendor: Ident | None = None
    module_part: Ident | None = None
    module_serial: Ident | None = None
    neighbor_device: Annotated[str, msgspec.Meta(max_length=128)] | None = None
    neighbor_port: Annotated[str, msgspec.Meta(max_length=128)] | None = None
    # The module's own judgement from its EEPROM: thresholds (keys ``<quantity>_<level>``, see
    # core.telemetry.dom.MODULE_KEYS; C, V, mA, dBm) and alarm/warning flags (True: On).
    module_thresholds: Annotated[dict[str, float], msgspec.Meta(max_length=len(MODULE_KEYS))] | None = None
    module_flags: Annotated[dict[str, bool], msgspec.Meta(max_length=len(MODULE_KEYS))] | None = None
    # Set by cabletrack, never by a collector: the DOM reading it could not believe (reasons and
    # values, core.telemetry.dom); the sample's DOM gauges are then None.
    dom_suspect: dict[str, Any] | None = None


_sample_decoder = msgspec.json.Decoder(Sample)

# The fields that are a reading (or an identity, a neighbour, a threshold): an item with none
# of them yields nothing to store and is refused as ``no_data`` (nothing dropped in silence).
# ``fec_hist_bins`` and ``fec_correction_limit`` only describe ``fec_hist``.
DATA_FIELDS = tuple(
    f
    for f in Sample.__struct_fields__
    if f not in ("device", "port", "ts", "fec_hist_bins", "fec_correction_limit")
)
_data_values = attrgetter(*DATA_FIELDS)
_NO_DATA = len(DATA_FIELDS)
NO_DATA_MESSAGE = (
    "the item carries no reading cabletrack stores (no counter, gauge, lane value, histogram, "
    "module identity, neighbour or threshold): nothing to store"
)


@lru_cache(maxsize=4)
def _batch_decoders(max_samples: int) -> tuple[msgspec.json.Decoder, msgspec.json.Decoder]:
    """Decoders of ``{"samples": [...]}`` (typed, and raw items) whose list holds at most
    ``max_samples`` items. msgspec checks the length once the array is read, so a body that
    could hold more valid samples than the cap is counted with the raw decoder first (raw items
    are views into the body, about 56 bytes each): its samples are never built (a 33 MB body of
    1,000,000 items costs the worker under 100 MB instead of 400)."""
    items = msgspec.Meta(max_length=max_samples)
    batch = msgspec.defstruct("_Batch", [("samples", Annotated[list[Sample], items])])
    raw = msgspec.defstruct("_RawBatch", [("samples", Annotated[list[msgspec.Raw], items])])
    return msgspec.json.Decoder(batch), msgspec.json.Decoder(raw)


@dataclass(frozen=True, slots=True)
class ItemError:
    """Why one item of a batch was refused. ``code``: malformed, invalid, no_data, future_ts,
    too_old, unknown_device, unknown_port, conflict."""

    index: int
    code: str
    message: str
    device: str | None = None
    port: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"index": self.index, "code": self.code, "message": self.message}
        if self.device is not None:
            d["device"] = self.device
        if self.port is not None:
            d["port"] = self.port
        return d


@dataclass(slots=True)
class Decoded:
    """Valid samples (``ts`` normalised to aware UTC datetimes), their item indexes, errors."""

    samples: list[Sample] = field(default_factory=list)
    index: list[int] = field(default_factory=list)
    errors: list[ItemError] = field(default_factory=list)
    received: int = 0
    # per-field columns of ``samples`` computed while checking (None: no item carries it),
    # so the storage steps need not walk the items again
    columns: dict[str, list | None] = field(default_factory=dict)


class BodyError(ValueError):
    """The body as a whole cannot be read (a 400)."""


def too_many(max_samples: int) -> BodyError:
    return BodyError(f"Too many samples: more than {max_samples:,} (at most {max_samples:,} per request).")


TOO_DEEP = "Body is nested too deeply to be a telemetry batch."

# Text fields of a sample: PostgreSQL refuses the NUL character in any text, so an item that
# carries one is refused by itself (it would otherwise fail the whole batch's write). Any other
# control character (CR, LF, ...) is refused too: these names reach alert summaries, mail
# subjects and log lines, where a line break splits a header or forges a line.
TEXT_FIELDS = ("device", "port", *IDENTITY_FIELDS)
NUL = "\x00"
# The earliest and latest epoch seconds an item may carry at all (before the window checks):
# 1970-01-02 and the year 3000. Zero and negatives are refused as invalid, not as too old.
_EPOCH_MIN, _EPOCH_MAX = 86400.0, 32503680000.0


def _normal_ts(ts: datetime | float) -> datetime | None:
    """The item's time as an aware UTC datetime, or None when it cannot be one."""
    if isinstance(ts, float):
        if not math.isfinite(ts) or not _EPOCH_MIN <= ts <= _EPOCH_MAX:
            return None
        return datetime.fromtimestamp(ts, UTC)
    if ts.tzinfo is UTC:
        return ts
    try:  # 0001-01-01T00:00:00+14:00 is before datetime.min in UTC
        return ts.astimezone(UTC)
    except OverflowError:
        return None


def _check(s: Sample, *, latest: datetime, earliest: datetime | None = None) -> str | None:
    """Checks msgspec cannot express. Normalises ``ts``; returns an error message, or the code
    ``future_ts`` / ``too_old``, or None."""
    ts = _normal_ts(s.ts)
    if ts is None:
        return "ts: out of range (RFC 3339 with a zone, or epoch seconds after 1970-01-02)"
    s.ts = ts
    if ts > latest:
        return "future_ts"
    if earliest is not None and ts < earliest:
        return "too_old"
    for name in TEXT_FIELDS:
        v = getattr(s, name)
        if v is not None and NUL in v:
            return f"{name}: text cannot contain the NUL character"
        if v is not None and has_control(v):
            return f"{name}: text cannot contain control characters (CR, LF, tab, ...)"
    for name in COUNTER_FIELDS:
        v = getattr(s, name)
        if v is not None and v > U64_MAX:
            return f"{name}: above the unsigned 64-bit range"
    if s.fec_hist_bins is not None:
        if s.fec_hist is None or len(s.fec_hist_bins) != len(s.fec_hist):
            return "fec_hist_bins: needs one [low, high] pair per fec_hist count"
        prev = -1
        for lo, hi in s.fec_hist_bins:
            if hi < lo or lo <= prev:
                return "fec_hist_bins: ranges must be ascending and not overlap"
            prev = hi
    for name in ("pre_fec_ber", "post_fec_ber", "temperature_c", "voltage_v"):
        v = getattr(s, name)
        if v is not None and not math.isfinite(v):
            return f"{name}: not a finite number"
    for name in LANE_FIELDS:
        v = getattr(s, name)
        if v is None:
            continue
        if isinstance(v, float):
            v = [v]
            setattr(s, name, v)
        for x in v:
            if x is not None and (not math.isfinite(x) or abs(x) > 1000):
                return f"{name}: lane value out of range"
    if s.dom_suspect is not None:
        return "dom_suspect: decided by cabletrack from the module's own readings, not sent by a collector"
    for name in ("module_thresholds", "module_flags"):
        v = getattr(s, name)
        if v is not None and not set(v) <= MODULE_KEYS:
            return f"{name}: unknown keys {sorted(set(v) - MODULE_KEYS)[:3]} (known: <quantity>_<level>)"
        if name == "module_thresholds" and v is not None and not all(map(math.isfinite, v.values())):
            return f"{name}: not a finite number"
    if _data_values(s).count(None) == _NO_DATA:
        return "no_data"
    return None


_TS = attrgetter("ts")
_count_none = methodcaller("count", None)


def _column_checks_pass(
    samples: list[Sample], *, latest: datetime, earliest: datetime | None, columns: dict[str, list | None]
) -> bool:
    """True when every sample passes every ``_check`` as it is (the common, plain batch).

    Column-wise with C-level builtins (``map``, ``max``, ``sum``, ``list.count``), so a batch
    of 5,000 costs well under a microsecond per item and per field; when this says no, the
    per-item ``_check`` runs and names each item's own problem. Lane gauges given as one number
    are turned into one-lane lists here, as ``_check`` does. Fills ``columns`` (field -> values,
    or None when no item carries the field) for the storage steps.
    """
    n = len(samples)

    def column(name: str) -> list | None:
        values = list(map(attrgetter(name), samples))
        values = None if values.count(None) == n else values
        columns[name] = values
        return values

    ts = list(map(_TS, samples))
    if not all(type(t) is datetime and t.tzinfo is UTC for t in ts) or max(ts) > latest:
        return False
    if earliest is not None and min(ts) < earliest:
        return False
    columns["ts"] = ts
    for name in TEXT_FIELDS:
        if has_control("".join(filter(None, map(attrgetter(name), samples)))):
            return False  # NUL or another control character: _check names the item
    for name in COUNTER_FIELDS:
        col = column(name)
        if col is not None and max(filter(None, col), default=0) > U64_MAX:
            return False
    if column("fec_hist_bins") is not None:
        return False
    for name in JUDGEMENT_FIELDS:
        if column(name) is not None:
            return False  # their keys and values are checked item by item (rare: EEPROM reads)
    for name in GAUGE_FIELDS:
        col = column(name)
        if col is not None and not math.isfinite(sum(filter(None, col))):
            return False  # NaN or infinity somewhere (the sum of in-range values is finite)
    for name in LANE_FIELDS:
        col = column(name)
        if col is None:
            continue
        if any(type(v) is float for v in col):
            for s, v in zip(samples, col, strict=True):
                if type(v) is float:
                    setattr(s, name, [v])
            col = column(name)
        values = list(filter(None, chain.from_iterable(filter(None, col))))
        if values and (not math.isfinite(sum(map(abs, values))) or max(map(abs, values)) > 1000):
            return False
    # An item with no reading is refused by itself in _check (no_data). The common batch has
    # a counter or gauge in every item: one full column proves it at C speed; only a batch
    # without one pays for the item-wise look.
    full = any(c is not None and c.count(None) == 0 for k, c in columns.items() if k != "ts")
    return full or max(map(_count_none, map(_data_values, samples))) < _NO_DATA


def _finish(
    out: Decoded,
    items: list[tuple[int, Sample]],
    *,
    now: datetime,
    max_future: timedelta,
    max_age: timedelta | None = None,
) -> Decoded:
    latest = now + max_future
    earliest = None if max_age is None else now - max_age
    samples = [s for _, s in items]
    columns: dict[str, list | None] = {}
    if samples and _column_checks_pass(samples, latest=latest, earliest=earliest, columns=columns):
        if not out.samples:
            out.columns = columns
        out.samples.extend(samples)
        out.index.extend(i for i, _ in items)
        _judge_dom(out)
        return out
    for i, s in items:
        problem = _check(s, latest=latest, earliest=earliest)
        if problem is None:
            out.samples.append(s)
            out.index.append(i)
        elif problem == "too_old":
            days = max_age.total_seconds() / 86400 if max_age is not None else 0
            out.errors.append(
                ItemError(
                    i,
                    "too_old",
                    f"ts {s.ts.isoformat()} is older than the raw retention ({days:g} days): "
                    "it would be deleted at once and cannot change the stored rollups",
                    s.device,
                    s.port,
                )
            )
        elif problem == "no_data":
            out.errors.append(ItemError(i, "no_data", NO_DATA_MESSAGE, s.device, s.port))
        elif problem == "future_ts":
            out.errors.append(
                ItemError(
                    i,
                    "future_ts",
                    f"ts {s.ts.isoformat()} is more than {int(max_future.total_seconds())} s in the future",
                    s.device,
                    s.port,
                )
            )
        else:
            out.errors.append(ItemError(i, "invalid", problem, s.device, s.port))
    _judge_dom(out)
    return out


_VOLTAGE = attrgetter("voltage_v")
_FLAGS = attrgetter("module_flags")


def _judge_dom(out: Decoded) -> None:
    """Set aside the DOM readings the module's own judgement or physics contradict
    (core.telemetry.dom): the values go to ``dom_suspect`` with the reasons and the sample's
    DOM gauges become None, so nothing downstream (rollups, baselines, rules) reads them.
    Only samples with a voltage or the module's flags can be judged."""
    volts = [v for v in map(_VOLTAGE, out.samples) if v is not None]
    odd_volts = bool(volts) and (min(volts) < SUPPLY_V[0] or max(volts) > SUPPLY_V[1])
    if not odd_volts and not any(map(_FLAGS, out.samples)):
        return  # the common batch: column-wise, no per-item work
    stripped = False
    for s in out.samples:
        if not s.module_flags and (s.voltage_v is None or SUPPLY_V[0] <= s.voltage_v <= SUPPLY_V[1]):
            continue
        reasons = dom_suspect_reasons(s)
        if not reasons:
            continue
        s.dom_suspect = {
            "reasons": reasons,
            **{f: getattr(s, f) for f in DOM_FIELDS if getattr(s, f) is not None},
        }
        for f in DOM_FIELDS:
            setattr(s, f, None)
        stripped = True
    if stripped:
        for f in (*DOM_FIELDS, "dom_suspect"):
            out.columns.pop(f, None)


def _validation_error(i: int, raw: bytes | Any, exc: Exception) -> ItemError:
    device = port = None
    try:
        obj = msgspec.json.decode(raw) if isinstance(raw, (bytes, msgspec.Raw)) else raw
        if isinstance(obj, dict):
            device = obj.get("device") if isinstance(obj.get("device"), str) else None
            port = obj.get("port") if isinstance(obj.get("port"), str) else None
        else:
            return ItemError(i, "malformed", "an item must be a JSON object")
    except msgspec.DecodeError:
        return ItemError(i, "malformed", f"not valid JSON: {exc}")
    except RecursionError:  # refused at its first token by the typed decode, too deep to read whole
        return ItemError(i, "malformed", "item nested too deeply")
    msg = str(exc)
    return ItemError(i, "invalid", msg, device, port)


# The shortest item that decodes as a sample: {"device":"d","port":"p","ts":1} (an invalid item
# stops the typed decode at once, so only valid ones can pile up).
MIN_SAMPLE_BYTES = 32


def _is_length_error(exc: msgspec.ValidationError) -> bool:
    return str(exc).endswith("at `$.samples`") and "of length <=" in str(exc)


def duplicate_key_error(key: str, item: int | None = None) -> BodyError:
    """A key named twice in any object of a body (a sample's field, a threshold, an ignored
    field, the batch's own ``samples``): msgspec would keep the last copy, another reader the
    first, so the body says two things, and none of it is stored."""
    where = "" if item is None else f" (item {item}, as item errors count the lines)"
    return BodyError(strictjson.duplicate_message(key, where))


def _refuse_duplicate_keys(body: bytes) -> None:
    key = strictjson.duplicate_key(body)
    if key is not None:
        raise duplicate_key_error(key)


def decode_json(
    body: bytes,
    *,
    now: datetime,
    max_future: timedelta,
    max_samples: int,
    max_age: timedelta | None = None,
) -> Decoded:
    """Decode ``{"samples": [...]}``. Raises ``BodyError`` when the body is not such an object,
    holds more than ``max_samples`` items (refused while reading, before they exist) or is
    nested too deeply. Items older than ``max_age`` are refused one by one (``too_old``)."""
    body = without_bom(body)
    batch_decoder, raw_decoder = _batch_decoders(max_samples)
    if len(body) > MIN_SAMPLE_BYTES * max_samples:
        # Enough bytes for more valid samples than the cap: count the items first as raw views
        # (a fifth of a typed decode's time, a tenth of its memory), so samples are never built.
        try:
            raw_decoder.decode(body)
        except msgspec.ValidationError as exc:
            if _is_length_error(exc):
                raise too_many(max_samples) from None
        except (msgspec.DecodeError, RecursionError):
            pass  # said below, by the typed decode
    try:
        batch = batch_decoder.decode(body)
    except msgspec.ValidationError as exc:
        if _is_length_error(exc):
            raise too_many(max_samples) from None
        batch = None
    except msgspec.DecodeError as exc:
        raise BodyError(f"Body is not valid JSON: {exc}") from exc
    except RecursionError:
        raise BodyError(TOO_DEEP) from None
    _refuse_duplicate_keys(body)
    if batch is not None:
        out = Decoded(received=len(batch.samples))
        return _finish(out, list(enumerate(batch.samples)), now=now, max_future=max_future, max_age=max_age)
    try:
        raw = raw_decoder.decode(body)
    except msgspec.ValidationError as exc:
        if _is_length_error(exc):
            raise too_many(max_samples) from None
        raise BodyError(f'Body must be a JSON object {{"samples": [...]}}: {exc}') from exc
    except msgspec.DecodeError as exc:
        raise BodyError(f'Body must be a JSON object {{"samples": [...]}}: {exc}') from exc
    except RecursionError:  # an item too deep after an invalid one (the typed decode stopped before it)
        raise BodyError(TOO_DEEP) from None
    out = Decoded(received=len(raw.samples))
    good: list[tuple[int, Sample]] = []
    for i, item in enumerate(raw.samples):
        try:
            good.append((i, _sample_decoder.decode(item)))
        except msgspec.ValidationError as exc:
            out.errors.append(_validation_error(i, item, exc))
        except RecursionError:
            out.errors.append(ItemError(i, "malformed", "item nested too deeply"))
    return _finish(out, good, now=now, max_future=max_future, max_age=max_age)


_LINE = re.compile(rb"[^\n]*\S[^\n]*")

BOM = b"\xef\xbb\xbf"


def without_bom(body: bytes) -> bytes:
    """The body without a leading UTF-8 byte-order mark (text saved by Windows tools): no part of
    what was sent. Every telemetry body goes through this, native JSON, NDJSON and the adapters'
    formats alike; a mark anywhere else stays and is judged with the rest."""
    return body.removeprefix(BOM)


def _ndjson_lines(body: bytes, max_samples: int) -> list[bytes]:
    """The non-blank lines, refused (``BodyError``) beyond ``max_samples`` before they are
    split out: the newline count is a free upper bound, and only a body above it is counted
    line by line, stopping at the first line over the cap."""
    if body.count(b"\n") >= max_samples and next(islice(_LINE.finditer(body), max_samples, None), None):
        raise too_many(max_samples)
    return [ln for ln in body.split(b"\n") if ln.strip()]


def decode_ndjson(
    body: bytes,
    *,
    now: datetime,
    max_future: timedelta,
    max_samples: int,
    max_age: timedelta | None = None,
) -> Decoded:
    """One sample per line; blank lines are skipped. A bad line is an item error (its index is
    its position among the non-blank lines), never a 400."""
    lines = _ndjson_lines(without_bom(body), max_samples)
    out = Decoded(received=len(lines))
    good: list[tuple[int, Sample]] = []
    for i, line in enumerate(lines):
        try:
            good.append((i, _sample_decoder.decode(line)))
        except msgspec.ValidationError as exc:
            out.errors.append(_validation_error(i, line, exc))
        except msgspec.DecodeError as exc:
            out.errors.append(ItemError(i, "malformed", f"line is not valid JSON: {exc}"))
        except RecursionError:
            out.errors.append(ItemError(i, "malformed", "line nested too deeply"))
    each_is_json = not any(e.code == "malformed" for e in out.errors)
    found = strictjson.duplicate_key_in_lines(lines, each_is_json=each_is_json)
    if found is not None:
        raise duplicate_key_error(found[1], item=found[0])
    return _finish(out, good, now=now, max_future=max_future, max_age=max_age)


def decode_objects(
    objs: list[dict], *, now: datetime, max_future: timedelta, max_age: timedelta | None = None
) -> Decoded:
    """Validate samples an adapter produced (dicts in the same format)."""
    out = Decoded(received=len(objs))
    good: list[tuple[int, Sample]] = []
    for i, obj in enumerate(objs):
        try:
            good.append((i, msgspec.convert(obj, Sample)))
        except msgspec.ValidationError as exc:
            out.errors.append(_validation_error(i, obj, exc))
        except RecursionError:
            out.errors.append(ItemError(i, "malformed", "item nested too deeply"))
    return _finish(out, good, now=now, max_future=max_future, max_age=max_age)
