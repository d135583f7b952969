"""Collective timing formats, read into one shape (``Op``): pure, no ORM.

* ``inspector``: NCCL's Inspector profiler plugin (``plugins/profiler/inspector``), one JSON
  object per operation per communicator: ``header`` (``id`` = commHash, ``comm_name``, ``rank``,
  ``n_ranks``, ``nnodes``), ``metadata`` (``hostname``, ``pid``, ``dump_timestamp_us``) and
  ``coll_perf`` (``coll``, ``coll_sn``, ``coll_msg_size_bytes``, ``coll_exec_time_us``,
  ``coll_algobw_gbs``, ``coll_busbw_gbs``; with ``NCCL_INSPECTOR_DUMP_VERBOSE=1`` also
  ``event_trace_ts`` with the per-channel kernel times) or ``p2p_perf``. The plugin writes the
  objects one after another, pretty-printed or one per line: both are read.
* ``nccl-tests``: the text an ``*_perf`` binary prints: the ``# Using devices`` lines (rank,
  host, pid, device) and the result table (one row per message size).
* ``json``: cabletrack's own ``{"job": "...", "records": [...]}`` for custom collectors.

Every item is checked by itself: a bad one becomes an ``ItemError`` and the others are kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import msgspec

from inventory.core import strictjson
from inventory.core.telemetry.decode import ItemError

FORMATS = ("json", "inspector", "inspector-prom", "nccl-tests")
# An op placed by its host and GPU alone (the Inspector's Prometheus mode names no rank): the
# service gives it the job rank of that GPU.
RANK_BY_GPU = -2
U63 = (1 << 63) - 1

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
CommId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
NonNeg = Annotated[int, msgspec.Meta(ge=0, le=U63)]
Time = Annotated[datetime, msgspec.Meta(tz=True)] | float


class FormatError(ValueError):
    """The body as a whole cannot be read as the chosen format (a 400)."""


@dataclass(slots=True)
class Op:
    """One operation of one communicator as one rank saw it (``rank`` -1: the whole
    communicator, as nccl-tests averages it)."""

    comm: str
    comm_name: str
    n_ranks: int
    n_nodes: int | None
    rank: int
    coll: str
    seq: int
    msg_bytes: int
    exec_us: float
    ts: datetime
    source: str
    busbw_gbs: float | None = None
    algbw_gbs: float | None = None
    host: str | None = None
    pid: int | None = None
    gpu: int | None = None
    channels_us: dict[int, float] = field(default_factory=dict)


@dataclass(slots=True)
class Parsed:
    ops: list[tuple[int, Op]] = field(default_factory=list)  # (item index, op)
    errors: list[ItemError] = field(default_factory=list)
    received: int = 0
    job: str | None = None  # named by the body (own JSON)
    # nccl-tests: who ran each rank, from "# Using devices": (rank, host, pid, device)
    devices: list[tuple[int, str, int, int]] = field(default_factory=list)


# --- cabletrack's own JSON -------------------------------------------------------------------


class OwnRecord(msgspec.Struct, forbid_unknown_fields=False):
    comm: CommId
    rank: Annotated[int, msgspec.Meta(ge=-1, le=1 << 24)]
    coll: Annotated[str, msgspec.Meta(min_length=1, max_length=32)]
    seq: NonNeg
    msg_bytes: NonNeg
    exec_us: Annotated[float, msgspec.Meta(ge=0, le=1e12)]
    ts: Time
    n_ranks: Annotated[int, msgspec.Meta(ge=1, le=1 << 24)]
    comm_name: Annotated[str, msgspec.Meta(max_length=128)] = ""
    n_nodes: Annotated[int, msgspec.Meta(ge=1, le=1 << 24)] | None = None
    busbw_gbs: Annotated[float, msgspec.Meta(ge=0, le=1e6)] | None = None
    algbw_gbs: Annotated[float, msgspec.Meta(ge=0, le=1e6)] | None = None
    host: Name | None = None
    pid: Annotated[int, msgspec.Meta(ge=0, le=1 << 32)] | None = None
    gpu: Annotated[int, msgspec.Meta(ge=0, le=255)] | None = None
    channels_us: dict[str, Annotated[float, msgspec.Meta(ge=0, le=1e12)]] | None = None


class OwnBatch(msgspec.Struct):
    records: list[msgspec.Raw]
    job: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None


class OwnBatchTyped(msgspec.Struct):
    """The whole batch decoded at once: what a batch without a bad record costs (a batch with
    one goes record by record through ``OwnRecord``, which says what is wrong with which one)."""

    records: list[OwnRecord]
    job: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None


_own_batch = msgspec.json.Decoder(OwnBatch)
_own_batch_typed = msgspec.json.Decoder(OwnBatchTyped)
_own_record = msgspec.json.Decoder(OwnRecord)


def _ts(value: datetime | float) -> datetime | None:
    if isinstance(value, float | int):
        if not math.isfinite(value) or not 86400.0 <= value <= 32503680000.0:
            return None
        return datetime.fromtimestamp(value, UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return None


def _refuse_duplicate_keys(key: str | None) -> None:
    """A key named twice in an object: the body says two things, and none of it is stored."""
    if key is not None:
        raise FormatError(strictjson.duplicate_message(key))


def _own_op(i: int, r: OwnRecord, out: Parsed) -> None:
    """One decoded record as an ``Op`` in ``out``, or its error."""
    ts = _ts(r.ts)
    if ts is None:
        out.errors.append(ItemError(i, "invalid", "ts: out of range"))
        return
    if "\x00" in r.comm or "\x00" in r.coll or "\x00" in r.comm_name:
        out.errors.append(ItemError(i, "invalid", "comm, comm_name, coll: text without NUL characters"))
        return
    try:
        channels = {int(k): float(v) for k, v in (r.channels_us or {}).items()}
    except ValueError:
        out.errors.append(ItemError(i, "invalid", "channels_us: keys are channel numbers"))
        return
    out.ops.append(
        (
            i,
            Op(
                comm=r.comm,
                comm_name=r.comm_name,
                n_ranks=r.n_ranks,
                n_nodes=r.n_nodes,
                rank=r.rank,
                coll=r.coll,
                seq=r.seq,
                msg_bytes=r.msg_bytes,
                exec_us=r.exec_us,
                ts=ts,
                source="json",
                busbw_gbs=r.busbw_gbs,
                algbw_gbs=r.algbw_gbs,
                host=r.host,
                pid=r.pid,
                gpu=r.gpu,
                channels_us=channels,
            ),
        )
    )


def parse_own(body: bytes, *, max_items: int) -> Parsed:
    _refuse_duplicate_keys(strictjson.duplicate_key(body))
    try:
        whole = _own_batch_typed.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        whole = None
    if whole is not None and len(whole.records) <= max_items:
        out = Parsed(received=len(whole.records), job=whole.job)
        for i, r in enumerate(whole.records):
            _own_op(i, r, out)
        return out
    try:
        batch = _own_batch.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise FormatError(f'Body must be a JSON object {{"job": "...", "records": [...]}}: {exc}') from exc
    if len(batch.records) > max_items:
        raise FormatError(f"Too many records: more than {max_items:,} per request.")
    out = Parsed(received=len(batch.records), job=batch.job)
    for i, raw in enumerate(batch.records):
        try:
            r = _own_record.decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            out.errors.append(ItemError(i, "invalid", str(exc)))
            continue
        _own_op(i, r, out)
    return out


# --- NCCL Inspector --------------------------------------------------------------------------


def _object_lines(body: bytes, max_items: int) -> list[bytes] | None:
    """The lines of a stream written one object per line (the common case), or None when the
    objects span lines (pretty-printed)."""
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines or not all(ln.lstrip().startswith(b"{") and ln.rstrip().endswith(b"}") for ln in lines):
        return None
    if len(lines) > max_items:
        raise FormatError(f"Too many records: more than {max_items:,} per request.")
    return lines


def _json_stream(text: str, max_items: int, lines: list[bytes] | None) -> list[Any]:
    """The JSON values of a stream written one after another (one per line, or pretty-printed
    across lines, as the Inspector writes them)."""
    if lines is not None:
        try:  # the common case: one object per line (fast path)
            objs = msgspec.json.decode(b"[" + b",".join(lines) + b"]")
        except msgspec.DecodeError:  # ValidationError too (a number out of range): item by item
            objs = None
        if objs is not None and len(objs) <= max_items:
            found = strictjson.duplicate_key_in_lines(lines, each_is_json=True)
            _refuse_duplicate_keys(None if found is None else found[1])
            return objs
    decoder = json.JSONDecoder(object_pairs_hook=strictjson.no_duplicates)
    out: list[Any] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            return out
        if len(out) >= max_items:
            raise FormatError(f"Too many records: more than {max_items:,} per request.")
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except strictjson.DuplicateKeyError as exc:
            _refuse_duplicate_keys(exc.key)
        except json.JSONDecodeError as exc:
            raise FormatError(f"Not a stream of Inspector JSON objects (format=inspector): {exc}") from exc
        except RecursionError:
            raise FormatError(
                "Body is nested too deeply to be Inspector output (format=inspector)."
            ) from None
        out.append(obj)


def _int(d: dict, key: str, lo: int = 0, hi: int = U63) -> int:
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ValueError(f"{key}: an integer from {lo} to {hi} is required")
    return v


def _num(d: dict, key: str, *, required: bool = True) -> float | None:
    v = d.get(key)
    if v is None and not required:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise ValueError(f"{key}: a non-negative number is required")
    return float(v)


def _str(d: dict, key: str, *, required: bool = True, max_length: int = 128) -> str:
    v = d.get(key)
    if v is None and not required:
        return ""
    if not isinstance(v, str) or not v or len(v) > max_length or "\x00" in v:
        raise ValueError(f"{key}: a text of 1 to {max_length} characters is required")
    return v


def _us_time(us: int) -> datetime:
    ts = _ts(us / 1e6)
    if ts is None:
        raise ValueError("timestamp (microseconds since the epoch) out of range")
    return ts


def _trace(trace: Any, prefix: str, dump_us: Any) -> tuple[datetime, dict[int, float]]:
    """When the operation ended (its own stop time when verbose, else the dump's time) and the
    per-channel kernel times (``event_trace_ts``, written with ``NCCL_INSPECTOR_DUMP_VERBOSE=1``)."""
    if not isinstance(trace, dict):
        trace = {}
    stop = trace.get(f"{prefix}_stop_ts")
    if isinstance(stop, int) and stop > 0:
        ts = _us_time(stop)
    else:
        if isinstance(dump_us, bool) or not isinstance(dump_us, int) or not 0 <= dump_us <= U63:
            raise ValueError(f"dump_timestamp_us: an integer from 0 to {U63} is required")
        ts = _us_time(dump_us)
    channels: dict[int, float] = {}
    for k in trace.get("kernel_events") or []:
        if isinstance(k, dict) and isinstance(k.get("channel_id"), int):
            a, b = k.get("kernel_start_ts"), k.get("kernel_stop_ts")
            if isinstance(a, int) and isinstance(b, int) and b >= a:
                channels[k["channel_id"]] = float(b - a)
    return ts, channels


def inspector_op(obj: Any) -> Op:
    """One Inspector object as an ``Op`` (ValueError with the reason otherwise)."""
    if not isinstance(obj, dict):
        raise ValueError("an item must be a JSON object")
    header, meta = obj.get("header"), obj.get("metadata")
    if not isinstance(header, dict) or not isinstance(meta, dict):
        raise ValueError("header and metadata objects are required")
    perf, prefix = obj.get("coll_perf"), "coll"
    if perf is None:
        perf, prefix = obj.get("p2p_perf"), "p2p"
    if not isinstance(perf, dict):
        raise ValueError("coll_perf (or p2p_perf) object is required")
    ts, channels = _trace(perf.get("event_trace_ts"), prefix, meta.get("dump_timestamp_us"))
    n_nodes = header.get("nnodes")
    return Op(
        comm=_str(header, "id", max_length=64),
        comm_name=(header.get("comm_name") if isinstance(header.get("comm_name"), str) else "")[:128],
        n_ranks=_int(header, "n_ranks", 1, 1 << 24),
        n_nodes=n_nodes if isinstance(n_nodes, int) and n_nodes > 0 else None,
        rank=_int(header, "rank", 0, 1 << 24),
        coll=_str(perf, prefix, max_length=32),
        seq=_int(perf, f"{prefix}_sn"),
        msg_bytes=_int(perf, f"{prefix}_msg_size_bytes"),
        exec_us=_num(perf, f"{prefix}_exec_time_us") or 0.0,
        busbw_gbs=_num(perf, f"{prefix}_busbw_gbs", required=False),
        algbw_gbs=_num(perf, f"{prefix}_algobw_gbs", required=False),
        ts=ts,
        source="inspector",
        host=_str(meta, "hostname"),
        pid=_int(meta, "pid", 0, 1 << 32),
        channels_us=channels,
    )


# The whole stream decoded at once into typed objects: what a batch without a bad object costs.
# The types accept only objects that ``inspector_op`` reads, and read them the same (the same
# helpers finish them); a batch with anything else goes object by object through ``inspector_op``,
# which says what is wrong with which one.
Finite = Annotated[float, msgspec.Meta(ge=0, le=sys.float_info.max)]


class _Header(msgspec.Struct):
    id: CommId
    rank: Annotated[int, msgspec.Meta(ge=0, le=1 << 24)]
    n_ranks: Annotated[int, msgspec.Meta(ge=1, le=1 << 24)]
    comm_name: str = ""
    nnodes: int | None = None


class _Metadata(msgspec.Struct):
    hostname: Name
    pid: Annotated[int, msgspec.Meta(ge=0, le=1 << 32)]
    dump_timestamp_us: NonNeg


def _perf_struct(prefix: str) -> type:
    fields = [
        ("op", Annotated[str, msgspec.Meta(min_length=1, max_length=32)]),
        ("sn", NonNeg),
        ("msg_size_bytes", NonNeg),
        ("exec_time_us", Finite),
        ("algobw_gbs", Finite | None, None),
        ("busbw_gbs", Finite | None, None),
        ("event_trace_ts", Any, None),
    ]
    names = {f[0]: f"{prefix}_{f[0]}" for f in fields} | {"op": prefix, "event_trace_ts": "event_trace_ts"}
    return msgspec.defstruct(f"_{prefix.title()}Perf", fields, rename=names)


_CollPerf, _P2pPerf = _perf_struct("coll"), _perf_struct("p2p")


class _InspectorObject(msgspec.Struct):
    header: _Header
    metadata: _Metadata
    coll_perf: _CollPerf | None = None  # type: ignore[valid-type]
    p2p_perf: _P2pPerf | None = None  # type: ignore[valid-type]


_inspector_batch = msgspec.json.Decoder(list[_InspectorObject])


def _inspector_typed(lines: list[bytes]) -> list[tuple[int, Op]] | None:
    """Every object of a one-per-line stream as an ``Op``; None when any is not plainly valid."""
    try:
        objs = _inspector_batch.decode(b"[" + b",".join(lines) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    ops = []
    try:
        for i, o in enumerate(objs):
            h, m, perf, prefix = o.header, o.metadata, o.coll_perf, "coll"
            if perf is None:
                perf, prefix = o.p2p_perf, "p2p"
            if perf is None or "\x00" in h.id or "\x00" in perf.op or "\x00" in m.hostname:
                return None
            ts, channels = _trace(perf.event_trace_ts, prefix, m.dump_timestamp_us)
            ops.append(
                (
                    i,
                    Op(
                        comm=h.id,
                        comm_name=h.comm_name[:128],
                        n_ranks=h.n_ranks,
                        n_nodes=h.nnodes if h.nnodes is not None and h.nnodes > 0 else None,
                        rank=h.rank,
                        coll=perf.op,
                        seq=perf.sn,
                        msg_bytes=perf.msg_size_bytes,
                        exec_us=perf.exec_time_us,
                        busbw_gbs=perf.busbw_gbs,
                        algbw_gbs=perf.algobw_gbs,
                        ts=ts,
                        source="inspector",
                        host=m.hostname,
                        pid=m.pid,
                        channels_us=channels,
                    ),
                )
            )
    except ValueError:  # a time out of range: the slow path names the object
        return None
    return ops


def parse_inspector(body: bytes, *, max_items: int) -> Parsed:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"Body is not UTF-8 text (the format's output is): {exc}") from exc
    lines = _object_lines(body, max_items)
    if lines is not None and (ops := _inspector_typed(lines)) is not None:
        found = strictjson.duplicate_key_in_lines(lines, each_is_json=True)
        _refuse_duplicate_keys(None if found is None else found[1])
        return Parsed(received=len(ops), ops=ops)
    objs = _json_stream(text, max_items, lines)
    out = Parsed(received=len(objs))
    for i, obj in enumerate(objs):
        try:
            out.ops.append((i, inspector_op(obj)))
        except ValueError as exc:
            out.errors.append(ItemError(i, "invalid", str(exc)))
    return out


# --- NCCL Inspector, Prometheus textfile mode --------------------------------------------------

_PROM = re.compile(r"^(nccl_[a-zA-Z0-9_]+)\{(.*)\}\s+(\S+)(?:\s+\d+)?$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_SIZE = re.compile(r"^(\d+)(?:-\d+)?\s*([KMGT]?B)$", re.I)
_UNIT = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def parse_inspector_prom(body: bytes, *, max_items: int, ts: datetime) -> Parsed:
    """The Inspector's Prometheus textfile (``NCCL_INSPECTOR_PROM_DUMP=1``): per (node, GPU,
    communicator name, collective, message-size bucket) the latest execution time and bus
    bandwidth. It names the GPU (``gpu="GPU3"``) but no rank: each series is one operation of
    that GPU's rank, dated ``ts`` (the file's time), its sequence the dump's second."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"Body is not UTF-8 text (the format's output is): {exc}") from exc
    series: dict[tuple, dict] = {}
    order: list[tuple] = []
    bad: list[tuple[int, str]] = []
    for n, line in enumerate(ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")):
        m = _PROM.match(line.strip())
        if not m:
            bad.append((n, f"not a Prometheus sample line: {line[:80]}"))
            continue
        name, labels, value = m.group(1), dict(_LABEL.findall(m.group(2))), m.group(3)
        if name not in ("nccl_collective_exec_time_microseconds", "nccl_bus_bandwidth_gbs"):
            continue  # p2p series: not collectives
        key = tuple(
            labels.get(k, "")
            for k in ("node", "gpu", "comm_name", "collective", "message_size", "algo_proto")
        )
        if key not in series:
            if len(order) >= max_items:
                raise FormatError(f"Too many series: more than {max_items:,} per request.")
            series[key] = {"labels": labels, "line": n}
            order.append(key)
        series[key][name] = value
    out = Parsed(received=len(order) + len(bad))
    out.errors += [ItemError(i, "invalid", msg) for i, msg in bad]
    for i, key in enumerate(order, start=len(bad)):
        d = series[key]
        lab = d["labels"]
        try:
            gpu = re.fullmatch(r"GPU(\d+)", lab.get("gpu", ""))
            size = _SIZE.match(lab.get("message_size", "").replace(" ", ""))
            if not gpu or not size:
                raise ValueError("gpu (GPU<n>) and message_size (<n>-<m><unit>) labels are required")
            exec_us = float(d.get("nccl_collective_exec_time_microseconds", "nan"))
            if not math.isfinite(exec_us) or exec_us < 0:
                raise ValueError("nccl_collective_exec_time_microseconds: a non-negative number is required")
            bw = d.get("nccl_bus_bandwidth_gbs")
            busbw = float(bw) if bw is not None else None
            if busbw is not None and not (math.isfinite(busbw) and busbw >= 0):
                raise ValueError("nccl_bus_bandwidth_gbs: a non-negative number is required")
            name = lab.get("comm_name") or "unknown"
            nranks = int(lab.get("nranks") or 0)
            if not lab.get("node") or nranks < 1:
                raise ValueError("node and nranks labels are required")
            out.ops.append(
                (
                    i,
                    Op(
                        comm=name[:64],
                        comm_name=name[:128],
                        n_ranks=nranks,
                        n_nodes=int(lab.get("n_nodes") or 0) or None,
                        rank=RANK_BY_GPU,
                        coll=lab.get("collective", "")[:32] or "unknown",
                        seq=int(ts.timestamp()),
                        msg_bytes=int(size.group(1)) * _UNIT[size.group(2).upper()],
                        exec_us=exec_us,
                        busbw_gbs=busbw,
                        ts=ts,
                        source="inspector-prom",
                        host=lab["node"][:128],
                        gpu=int(gpu.group(1)),
                    ),
                )
            )
        except ValueError as exc:
            out.errors.append(ItemError(i, "invalid", str(exc)))
    if lab_job := next((series[k]["labels"].get("slurm_job_id") for k in order), None):
        out.job = None if lab_job == "unknown" else lab_job
    return out


# --- nccl-tests ------------------------------------------------------------------------------

_DEVICE = re.compile(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\b")
_TEST = re.compile(r"^# Collective test starting: (\S+)")
# The binary's name -> the collective NCCL calls it (as the Inspector names them).
TEST_COLL = {
    "all_reduce_perf": "AllReduce",
    "all_gather_perf": "AllGather",
    "reduce_scatter_perf": "ReduceScatter",
    "broadcast_perf": "Broadcast",
    "reduce_perf": "Reduce",
    "alltoall_perf": "AllToAll",
    "sendrecv_perf": "SendRecv",
}


def parse_nccl_tests(body: bytes, *, max_items: int, ts: datetime, test: str | None = None) -> Parsed:
    """The result table of an nccl-tests binary: one ``Op`` per message size (rank -1: the
    table is averaged over the ranks), out-of-place time and bus bandwidth. The run is its own
    communicator, named after the output (posting it again stores nothing twice)."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"Body is not UTF-8 text (the format's output is): {exc}") from exc
    out = Parsed()
    columns: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    for raw_line in text.splitlines():
        line = re.sub(r"^\[\d+,\d+\]<stdout>:", "", raw_line).rstrip()  # mpirun --tag-output
        m = _DEVICE.match(line)
        if m:
            out.devices.append((int(m.group(1)), m.group(3), int(m.group(2)), int(m.group(4))))
            continue
        m = _TEST.match(line)
        if m and test is None:
            test = m.group(1)
            continue
        if line.startswith("#"):
            words = line[1:].split()
            if columns is None and words[:2] == ["size", "count"]:
                columns = words
            continue
        words = line.split()
        if columns is not None and words and words[0].isdigit():
            rows.append((len(rows), words))
            if len(rows) > max_items:
                raise FormatError(f"Too many rows: more than {max_items:,} per request.")
    if columns is None:
        raise FormatError(
            "No nccl-tests result table (its '#  size  count  type ...' header) in the body: not that format."
        )
    if not out.devices:
        raise FormatError(
            "No '# Using devices' lines: the output does not say which ranks ran where (format=nccl-tests)."
        )
    out.received = len(rows)
    t_col = columns.index("time")
    bw_col = columns.index("busbw") if "busbw" in columns else None
    alg_col = columns.index("algbw") if "algbw" in columns else None
    n_ranks = len({d[0] for d in out.devices})
    comm = "nccl-tests-" + hashlib.sha256(body).hexdigest()[:16]
    coll = TEST_COLL.get(test or "", test or "AllReduce")
    for i, words in rows:
        try:
            size = int(words[0])
            exec_us = float(words[t_col])
            busbw = float(words[bw_col]) if bw_col is not None else None
            algbw = float(words[alg_col]) if alg_col is not None else None
        except (ValueError, IndexError):
            out.errors.append(
                ItemError(i, "invalid", f"row {i + 1}: not a result row: {' '.join(words)[:80]}")
            )
            continue
        if not math.isfinite(exec_us) or exec_us < 0 or size > U63:
            out.errors.append(ItemError(i, "invalid", f"row {i + 1}: time or size out of range"))
            continue
        out.ops.append(
            (
                i,
                Op(
                    comm=comm,
                    comm_name=f"nccl-tests {test or ''}".strip(),
                    n_ranks=n_ranks,
                    n_nodes=len({d[1] for d in out.devices}),
                    rank=-1,
                    coll=coll,
                    seq=i,
                    msg_bytes=size,
                    exec_us=exec_us,
                    busbw_gbs=busbw,
                    algbw_gbs=algbw,
                    ts=ts + timedelta(microseconds=0),
                    source="nccl-tests",
                ),
            )
        )
    return out
