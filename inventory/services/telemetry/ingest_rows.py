"""Telemetry ingest, first steps: the batch as columns (``IngestRows``), port resolution and
the verdict on repeats (an identical repeat is a duplicate, a different one a conflict)."""

from __future__ import annotations

import struct
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from operator import attrgetter

from django.db import connection

from inventory.core.telemetry.decode import (
    COUNTER_FIELDS,
    GAUGE_FIELDS,
    LANE_FIELDS,
    LINK_FIELDS,
    Decoded,
    ItemError,
    Sample,
)
from inventory.models import Device, PortAlias
from inventory.selectors.plant.ports import ports_resolve


@dataclass
class IngestResult:
    received: int
    stored: int = 0
    duplicates: int = 0
    errors: list[ItemError] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return len(self.errors)

    def as_dict(self) -> dict:
        return {
            "received": self.received,
            "stored": self.stored,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "errors": [e.as_dict() for e in sorted(self.errors, key=lambda e: e.index)],
        }


@dataclass(slots=True)
class IngestRows:
    """The batch's resolved items as parallel columns (no per-item objects on the hot path).

    ``columns``: field -> values (None: no row carries it), filled on first use; the
    decoder's columns are taken over when every decoded item is a row.
    """

    index: list[int]
    port_ids: list[int]
    samples: list[Sample]
    layout_ids: list[int | None] | None = None
    columns: dict[str, list | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.samples)

    def ts(self) -> list[datetime]:
        ts = self.columns.get("ts")
        if ts is None:
            ts = self.columns["ts"] = list(map(_TS, self.samples))
        return ts

    def keys(self) -> list[tuple[int, datetime]]:
        return list(zip(self.port_ids, self.ts(), strict=True))

    def col(self, name: str) -> list | None:
        """The field's values, or None when no row carries it."""
        try:
            return self.columns[name]
        except KeyError:
            values = list(map(attrgetter(name), self.samples))
            values = self.columns[name] = None if values.count(None) == len(values) else values
            return values

    def take(self, positions: Iterable[int]) -> IngestRows:
        pos = list(positions)
        return IngestRows(
            [self.index[p] for p in pos],
            [self.port_ids[p] for p in pos],
            [self.samples[p] for p in pos],
            None if self.layout_ids is None else [self.layout_ids[p] for p in pos],
        )


_TS = attrgetter("ts")
_DEVICE = attrgetter("device")
_PORT = attrgetter("port")


def max_ids(*models) -> tuple:
    """The highest id and history id of each model, in one round trip (index-backed ``max()``).

    A change fingerprint for per-process caches: any insert raises a max id (PostgreSQL
    sequences never go back, even on rollback) and every update or delete through the ORM
    writes a history row (django-simple-history).
    """
    qn = connection.ops.quote_name
    parts = []
    for model in models:
        parts.append(f"(SELECT max(id) FROM {qn(model._meta.db_table)})")  # noqa: S608 - table names from model _meta, quoted; values are parameters
        parts.append(f"(SELECT max(history_id) FROM {qn(model.history.model._meta.db_table)})")  # noqa: S608 - table names from model _meta, quoted; values are parameters
    with connection.cursor() as cur:
        cur.execute("SELECT " + ", ".join(parts))
        return tuple(cur.fetchone())


_NO_NAMES: dict[str, int] = {}


class _PortNameCache:
    """(device name, port name or alias) -> port id, per process, PostgreSQL only.

    Checked against ``max_ids(PortAlias, Device)`` on every batch, so a rename, a retired
    alias or a new port empties the cache before the next lookup. Only hits are cached; a miss
    always asks the database. SQLite reuses ids after a rollback, so it is not cached there
    (``make run`` volumes do not need it).

    Held as one small dict per device, its port names interned: the same few names (``eth0``,
    ``Ethernet1/1``) repeat on every device, so a name costs a dict slot and its id, not a
    (device, name) tuple with two strings of its own. Every current name of 131,072 GPUs
    (1,171,456) takes about 75 MB instead of about 240, and fits under the bound, which keeps a
    pathological client from growing it without end.
    """

    MAX_NAMES = 4_000_000

    def __init__(self) -> None:
        self.fingerprint: tuple | None = None
        self.devices: dict[str, dict[str, int]] = {}
        self.size = 0

    def _current_fingerprint(self) -> tuple:
        return max_ids(PortAlias, Device)

    def _found(self, pairs: list[tuple[str, str]]) -> list[int | None]:
        devices = self.devices
        return [devices.get(dev, _NO_NAMES).get(name) for dev, name in pairs]

    def lookup(self, pairs: list[tuple[str, str]]) -> list[int | None]:
        fp = self._current_fingerprint()
        if fp != self.fingerprint:
            self.fingerprint, self.devices, self.size = fp, {}, 0
        found = self._found(pairs)
        if None in found:
            missing = {p[0] for p, pid in zip(pairs, found, strict=True) if pid is None}
            fresh = self._device_names(missing)
            if self.size + sum(map(len, fresh.values())) > self.MAX_NAMES:
                self.devices, self.size = {}, 0
            for dev, names in fresh.items():
                self.size += len(names) - len(self.devices.get(dev, _NO_NAMES))
                self.devices[dev] = names
            found = self._found(pairs)
        return found

    @staticmethod
    def _device_names(devices: set[str]) -> dict[str, dict[str, int]]:
        """Every current name of every port of ``devices``, in one query: a collector posts
        for all ports of a device, so one miss loads the device's whole map."""
        qn = connection.ops.quote_name
        out: dict[str, dict[str, int]] = {}
        with connection.cursor() as cur:
            cur.execute(
                f"SELECT d.name, a.name, a.port_id FROM {qn(PortAlias._meta.db_table)} a "  # noqa: S608 - table names from model _meta, quoted; values are parameters
                f"JOIN {qn(Device._meta.db_table)} d ON d.id = a.device_id "
                "WHERE a.valid_to IS NULL AND d.name = ANY(%s)",
                [list(devices)],
            )
            for dev, name, pid in cur.fetchall():
                names = out.get(dev)
                if names is None:
                    names = out[dev] = {}
                names[sys.intern(name)] = pid
        return out


_port_names = _PortNameCache()


def _lookup_current(pairs: list[tuple[str, str]]) -> list[int | None]:
    if connection.vendor == "postgresql":
        return _port_names.lookup(pairs)
    found = ports_resolve(set(pairs))
    return list(map(found.get, pairs))


def resolve(decoded: Decoded, errors: list[ItemError]) -> IngestRows:
    """(device, port) -> port id: a cached map (one fingerprint query), misses in one query,
    and names that are no longer current resolved at the samples' own time."""
    samples, index = decoded.samples, decoded.index
    pairs = list(zip(map(_DEVICE, samples), map(_PORT, samples), strict=True))
    pids = _lookup_current(pairs)
    if None not in pids:
        return IngestRows(list(index), pids, list(samples), columns=dict(decoded.columns))
    missing = {p for p, pid in zip(pairs, pids, strict=True) if pid is None}
    dated: dict[tuple[str, str, datetime], int] = {}
    # A name that is no longer current may have been the port's name when the sample was
    # taken (a backfill across a rename): resolve those at the samples' own time.
    by_ts: dict[datetime, set[tuple[str, str]]] = defaultdict(set)
    for p, pid, s in zip(pairs, pids, samples, strict=True):
        if pid is None:
            by_ts[s.ts].add(p)
    for ts, ts_pairs in list(by_ts.items())[:8]:
        for (dev, name), pid in ports_resolve(ts_pairs, at=ts).items():
            dated[(dev, name, ts)] = pid
    unresolved_devices = {d for d, _ in missing}
    known_devices = set(Device.objects.filter(name__in=unresolved_devices).values_list("name", flat=True))
    keep: list[int] = []
    for pos, (i, s) in enumerate(zip(index, samples, strict=True)):
        pid = pids[pos]
        if pid is None:
            pid = pids[pos] = dated.get((s.device, s.port, s.ts))
        if pid is not None:
            keep.append(pos)
        elif s.device in known_devices:
            errors.append(
                ItemError(i, "unknown_port", f"No port {s.port!r} on device {s.device!r}.", s.device, s.port)
            )
        else:
            errors.append(ItemError(i, "unknown_device", f"No device {s.device!r}.", s.device, s.port))
    return IngestRows(index, pids, samples).take(keep)


def _f32(values):
    if values is None:
        return None
    return [None if x is None else struct.unpack("f", struct.pack("f", x))[0] for x in values]


def same(a: Sample, b: Sample) -> bool:
    """Same values? Lanes compare at the stored precision (float32 on PostgreSQL)."""
    for name in (*COUNTER_FIELDS, *GAUGE_FIELDS, *LINK_FIELDS, "fec_hist", "fec_hist_bins"):
        if getattr(a, name) != getattr(b, name):
            return False
    return all(_f32(getattr(a, name)) == _f32(getattr(b, name)) for name in LANE_FIELDS)


def dedupe(rows: IngestRows, result: IngestResult) -> IngestRows:
    """Within a batch: an identical repeat is a duplicate, a different one a conflict."""
    keys = rows.keys()
    if len(set(keys)) == len(keys):
        return rows
    seen: dict[tuple[int, datetime], int] = {}
    keep: list[int] = []
    for pos, key in enumerate(keys):
        first = seen.get(key)
        if first is None:
            seen[key] = pos
            keep.append(pos)
        elif same(rows.samples[first], rows.samples[pos]):
            result.duplicates += 1
        else:
            result.errors.append(
                conflict(
                    rows.index[pos], rows.samples[pos], f"differs from item {rows.index[first]} of this batch"
                )
            )
    return rows.take(keep)


def conflict(index: int, s: Sample, why: str) -> ItemError:
    return ItemError(
        index,
        "conflict",
        f"A sample for this port at {s.ts.isoformat()} exists with different values ({why}).",
        s.device,
        s.port,
    )
