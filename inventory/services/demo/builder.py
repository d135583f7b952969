"""The demo seed's building blocks: sizes of the cluster, plain row records and the builder.

Everything is built as plain records (``Table``), not model instances, and written with the
sanctioned bulk writer (rows + history rows), so 4,096 GPUs take seconds, not minutes.
"""

from __future__ import annotations

import operator
import random
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from types import SimpleNamespace

from inventory.conf import app_settings
from inventory.core.choices import CableKind, CableStatus, ConnectorType, DeviceRole, Fabric
from inventory.db import bulk
from inventory.models import Cable, CableEnd, Cage, Device, Port

NODES_PER_SU = 32
NODES_PER_RACK = 4
NICS = 8
LEAF_CAGES = 32  # twin-port OSFP: 64 x 400G; cages 1-16 down, 17-32 up
SPINE_PORTS = 64
PANEL_REARS = 4
POSITIONS = 12
# DGX H100-like: mlx5 device numbers and PCI buses of the eight compute NICs (not in order).
MLX5 = [0, 3, 4, 5, 6, 9, 10, 11]
IB_BUS = [24, 64, 79, 94, 154, 204, 219, 234]


def dt(d: date) -> datetime:
    """A calendar day as 09:00 UTC that day."""
    return datetime.combine(d, time(9, 0), tzinfo=UTC)


def seed_now(as_of: date) -> datetime:
    """The seed's "now" (its history rows, removals, faults): 09:00 UTC on ``as_of``, or the real
    now when that is earlier, so a seed run before 09:00 writes nothing dated in the future."""
    return min(dt(as_of), datetime.now(tz=UTC))


class Rec(SimpleNamespace):
    """One row to write: attribute access like a model instance, ``pk`` once written."""

    __eq__ = object.__eq__  # identity, hashable: records are dict keys and set members
    __hash__ = object.__hash__


class Table:
    """Rows of one model built as plain records, written with ``bulk.bulk_insert_rows``.

    A Django model instance costs ~40 us to build (``Model.__init__`` walks every field and
    descriptor); the 4,096-GPU seed needs ~165,000 rows, so instances alone cost seconds.
    A record is the model's defaults overlaid with the given values, exactly what an
    instance would have held; a foreign key may be given as a record or a saved instance
    (by field name, resolved to its ``pk`` at write time) or as an id (by ``attname``).
    """

    def __init__(self, model):
        self.model = model
        self.fields = [
            f
            for f in model._meta.concrete_fields
            if not f.primary_key and not (getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False))
        ]
        self.defaults = {f.attname: f.get_default() for f in self.fields}
        self.recs: list[Rec] = []

    def new(self, **values) -> Rec:
        r = Rec(**self.defaults)
        r.__dict__.update(values)
        r.pk = None
        self.recs.append(r)
        return r

    def write(self, **w) -> None:
        # A key given as a record or instance (by field name) becomes its id (by attname); then
        # one C-level itemgetter per row, not a Python call per field (millions at 131,072 GPUs).
        for f in self.fields:
            if f.is_relation:
                n, a = f.name, f.attname
                for d in (r.__dict__ for r in self.recs):
                    if n in d:
                        d[a] = d[n].pk if d[n] is not None else None
        get = operator.itemgetter(*(f.attname for f in self.fields))
        rows = [get(r.__dict__) for r in self.recs]
        ids = bulk.bulk_insert_rows(self.model, [f.attname for f in self.fields], rows, **w)
        for r, pk in zip(self.recs, ids, strict=True):
            r.pk = pk


class Builder:
    """The seed's random source and sizes, and the device, cage, port, cable and end rows it collects."""

    def __init__(self, *, gpus: int, seed: int, as_of: date, site_name: str):
        self.rng = random.Random(seed)
        self.gpus = gpus
        self.as_of = as_of
        self.site_name = site_name
        self.nodes = max(1, -(-gpus // NICS))
        self.sus = -(-self.nodes // NODES_PER_SU)
        self.leaves = self.sus * NICS
        self.spines = max(1, -(-self.leaves * (LEAF_CAGES // 2) * 2 // SPINE_PORTS))
        self.interval = app_settings.retest_interval_days
        self.cable_seq = 0
        self.serial_seq = 0
        # Collected rows, written in dependency order.
        self.device_t, self.cage_t, self.port_t = Table(Device), Table(Cage), Table(Port)
        self.cable_t, self.end_t = Table(Cable), Table(CableEnd)
        self.devices, self.cages, self.ports = self.device_t.recs, self.cage_t.recs, self.port_t.recs
        self.cables, self.ends = self.cable_t.recs, self.end_t.recs
        self.links: list[tuple[Rec, Rec, list[Rec], str]] = []

    # --- helpers -------------------------------------------------------------------------
    def install_day(self, earliest_days: int = 730, latest_days: int = 20) -> date:
        return self.as_of - timedelta(days=self.rng.randint(latest_days, earliest_days))

    def label(self) -> str:
        self.cable_seq += 1
        return f"C{self.cable_seq:06d}"

    def device(self, name, role, rack, u, height=1, vendor=None, model="") -> Rec:
        return self.device_t.new(
            name=name,
            role=role,
            rack=rack,
            position_u=u,
            height_u=height,
            vendor=vendor,
            model=model,
            serial=f"SN{self.rng.randrange(16**8):08X}" if role != DeviceRole.PATCH_PANEL else "",
            asset_tag=f"AT-{name}" if role != DeviceRole.PATCH_PANEL else None,
        )

    def cage(self, device, name, index, ff, lanes=8) -> Rec:
        return self.cage_t.new(device=device, name=name, index=index, form_factor=ff, lanes=lanes)

    def port(self, device, name, **kw) -> Rec:
        return self.port_t.new(device=device, name=name, **kw)

    def twin_ports(self, dev, cages, names) -> list[Rec]:
        """Two 400G ports per twin-port OSFP cage, named by ``names(cage index, connector index)``."""
        out = []
        for c, cage in enumerate(cages):
            for k in range(2):
                out.append(
                    self.port(
                        dev,
                        names(c, k),
                        cage=cage,
                        connector=k + 1,
                        lane_start=4 * k,
                        lane_count=4,
                        speed_gbps=400,
                        fabric=Fabric.ETHERNET,
                    )
                )
        return out

    def cable(
        self,
        kind,
        role,
        a_term,
        b_term,
        *,
        length,
        vendor,
        install,
        polarity="",
        conn=None,
        fibres=None,
        polish="",
        a_pinned=None,
        b_pinned=None,
        part="",
        serials=("", ""),
    ) -> Rec:
        c = self.cable_t.new(
            label=self.label(),
            kind=kind,
            role=role,
            polarity=polarity,
            length_m=Decimal(str(length)),
            vendor=vendor,
            part_number=part,
            serial_a=serials[0],
            serial_b=serials[1],
            lot=f"L{install:%y%W}",
            install_date=install,
            status=CableStatus.IN_PRODUCTION,
        )
        conn = conn or (ConnectorType.NONE if kind in CableKind.sealed() else ConnectorType.RJ45)
        for side, term, pinned in (("A", a_term, a_pinned), ("B", b_term, b_pinned)):
            where = dict(port=term) if isinstance(term, Rec) else dict(cage=term[0], connector=term[1])
            self.end_t.new(
                cable=c,
                side=side,
                leg=0,
                connector_type=conn,
                fibre_count=fibres,
                pinned=pinned,
                polish=polish,
                **where,
            )
        return c
