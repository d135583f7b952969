"""A realistic, deterministic demo cluster (``manage.py seed_demo``).

Rail-optimised leaf-spine: scalable units (SU) of 32 GPU nodes (8 GPUs, 8x 400G NICs in four
twin-port OSFP cages each). NIC ``ethK`` of every node in an SU goes to that SU's rail-K leaf
over an MPO-12/APC single-mode jumper. Leaf uplinks run leaf -> jumper -> SU patch panel ->
144-fibre MPO trunk (12 positions) -> spine-row panel -> jumper -> spine. Each node also has a
200G front-end port on a short DAC to the rack's front-end switch and a BMC on Cat6A to the
rack's management switch. Install dates spread over two years before ``as_of``; fibre cables
carry commissioning power-meter tests, some with 90-day retests, some overdue.

Everything is built as plain records (``_Table``), not model instances, and written with the
sanctioned bulk writer (rows + history rows), so 4,096 GPUs take seconds, not minutes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from types import SimpleNamespace

from django.apps import apps
from django.db import transaction

from inventory.conf import app_settings
from inventory.core.choices import (
    CableKind,
    CableRole,
    CableStatus,
    ConnectorType,
    DeviceRole,
    Direction,
    Fabric,
    FecType,
    FormFactor,
    Polarity,
    Polish,
    PortKind,
    ReferenceMethod,
    TestKind,
    TransceiverStatus,
    Verdict,
)
from inventory.db import bulk
from inventory.models import (
    Cable,
    CableEnd,
    CableTest,
    Cage,
    Device,
    FibreResult,
    Link,
    LinkSegment,
    Port,
    PortAlias,
    PortMapping,
    Rack,
    Room,
    Row,
    Site,
    Team,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    Vendor,
)
from inventory.services.demo.failures import demo_seed_failures

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


@dataclass
class SeedReport:
    skipped: bool = False
    site: str = ""
    counts: dict[str, int] = field(default_factory=dict)


def _dt(d: date) -> datetime:
    return datetime.combine(d, time(9, 0), tzinfo=UTC)


class _Rec(SimpleNamespace):
    """One row to write: attribute access like a model instance, ``pk`` once written."""

    __eq__ = object.__eq__  # identity, hashable: records are dict keys and set members
    __hash__ = object.__hash__


class _Table:
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
        self.recs: list[_Rec] = []

    def new(self, **values) -> _Rec:
        r = _Rec(**self.defaults)
        r.__dict__.update(values)
        r.pk = None
        self.recs.append(r)
        return r

    def write(self, **w) -> None:
        getters = []
        for f in self.fields:
            if f.is_relation:
                getters.append(
                    lambda d, n=f.name, a=f.attname: (
                        (d[n].pk if d[n] is not None else None) if n in d else d[a]
                    )
                )
            else:
                getters.append(lambda d, a=f.attname: d[a])
        rows = [[g(r.__dict__) for g in getters] for r in self.recs]
        ids = bulk.bulk_insert_rows(self.model, [f.attname for f in self.fields], rows, **w)
        for r, pk in zip(self.recs, ids, strict=True):
            r.pk = pk


class _Builder:
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
        self.device_t, self.cage_t, self.port_t = _Table(Device), _Table(Cage), _Table(Port)
        self.cable_t, self.end_t = _Table(Cable), _Table(CableEnd)
        self.devices, self.cages, self.ports = self.device_t.recs, self.cage_t.recs, self.port_t.recs
        self.cables, self.ends = self.cable_t.recs, self.end_t.recs
        self.links: list[tuple[_Rec, _Rec, list[_Rec], str]] = []

    # --- helpers -------------------------------------------------------------------------
    def install_day(self, earliest_days: int = 730, latest_days: int = 20) -> date:
        return self.as_of - timedelta(days=self.rng.randint(latest_days, earliest_days))

    def label(self) -> str:
        self.cable_seq += 1
        return f"C{self.cable_seq:06d}"

    def device(self, name, role, rack, u, height=1, vendor=None, model="") -> _Rec:
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

    def cage(self, device, name, index, ff, lanes=8) -> _Rec:
        return self.cage_t.new(device=device, name=name, index=index, form_factor=ff, lanes=lanes)

    def port(self, device, name, **kw) -> _Rec:
        return self.port_t.new(device=device, name=name, **kw)

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
    ) -> _Rec:
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
            where = dict(port=term) if isinstance(term, _Rec) else dict(cage=term[0], connector=term[1])
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


def _analyze_on_commit() -> None:
    """Refresh the planner's statistics once the seed has committed.

    Without them PostgreSQL plans every query against empty-table estimates (a few hundred
    rows) until autovacuum gets round to it: the cable list's end prefetch then hash-joins
    every port and cage (43 ms instead of 2 ms for a page of 50).
    """
    bulk.analyze_on_commit(
        *(
            m
            for m in apps.get_app_config("inventory").get_models()
            if not m._meta.db_table.startswith("inventory_historical")  # written, never queried hot
        )
    )


@transaction.atomic
def demo_seed(*, gpus: int, seed: int = 1, as_of: date | None = None, actor=None) -> SeedReport:
    """Build the demo cluster, or do nothing if this seed's site already exists."""
    as_of = as_of or date.today()  # noqa: DTZ011 - a calendar day, not an instant
    site_name = f"Demo Hall {seed}"
    if Site.objects.filter(name=site_name).exists():
        return SeedReport(skipped=True, site=site_name)
    if gpus < 8 or gpus > 65_536:
        raise ValueError("--gpus must be between 8 and 65,536")
    b = _Builder(gpus=gpus, seed=seed, as_of=as_of, site_name=site_name)
    now = _dt(as_of)
    w = dict(actor=actor, reason=f"seed_demo --gpus {gpus} --seed {seed}", now=now)
    rng = b.rng

    # --- people, vendors, catalogue -------------------------------------------------------
    team = (
        Team.objects.filter(name="Fabric ops").first()
        or bulk.bulk_insert(Team, [Team(name="Fabric ops", email="fabric-ops@example.com")], **w)[0]
    )
    vendor_names = [
        "NVIDIA",
        "Arista",
        "Innolight",
        "Eoptolink",
        "Coherent",
        "Corning",
        "Panduit",
        "Amphenol",
        "Supermicro",
    ]
    existing = {v.name: v for v in Vendor.objects.filter(name__in=vendor_names)}
    new_vendors = [Vendor(name=n, slug=n.lower()) for n in vendor_names if n not in existing]
    bulk.bulk_insert(Vendor, new_vendors, **w)
    V = {**existing, **{v.name: v for v in new_vendors}}

    def xmodel(vendor, part, **kw):
        return (
            TransceiverModel.objects.filter(vendor=V[vendor], part_number=part).first()
            or bulk.bulk_insert(
                TransceiverModel, [TransceiverModel(vendor=V[vendor], part_number=part, **kw)], **w
            )[0]
        )

    twin = dict(
        form_factor=FormFactor.OSFP,
        pmd="400GBASE-DR4",
        speed_gbps=800,
        lanes=8,
        lane_rate_gbps=100,
        logical_ports=2,
        connector_type=ConnectorType.MPO,
        connector_count=2,
        fibre_count=12,
        polish=Polish.APC,
        pinned=True,
        wavelength_nm=1310,
        single_mode=True,
        reach_m=500,
    )
    nic_models = [xmodel("NVIDIA", "MMS4X00-NM-FLT", **twin), xmodel("Innolight", "T-OS8FNT-N00-FLT", **twin)]
    sw_models = [
        xmodel("NVIDIA", "MMS4X00-NM", **twin),
        xmodel("Eoptolink", "EOLO-1682HG-05", **twin),
        xmodel("Coherent", "FTCD8613E1PCM", **twin),
    ]

    # --- locations ------------------------------------------------------------------------
    site = bulk.bulk_insert(Site, [Site(name=site_name, slug=f"demo-{seed}", team=team)], **w)[0]
    room = bulk.bulk_insert(Room, [Room(site=site, name="Hall 1")], **w)[0]
    rows = bulk.bulk_insert(
        Row,
        [Row(room=room, name=f"S{s + 1:02d}", team=team) for s in range(b.sus)]
        + [Row(room=room, name="SP", team=team)],
        **w,
    )
    spine_row = rows[-1]
    racks: list[Rack] = []
    su_gpu_racks: list[list[Rack]] = []
    su_net_rack: list[Rack] = []
    for s in range(b.sus):
        nodes_here = min(NODES_PER_SU, b.nodes - s * NODES_PER_SU)
        gr = [
            Rack(row=rows[s], name=f"S{s + 1:02d}-G{r + 1:02d}", position=r + 1)
            for r in range(-(-nodes_here // NODES_PER_RACK))
        ]
        nr = Rack(row=rows[s], name=f"S{s + 1:02d}-N01", position=len(gr) + 1)
        su_gpu_racks.append(gr)
        su_net_rack.append(nr)
        racks += [*gr, nr]
    spine_racks = [
        Rack(row=spine_row, name=f"SP-{r + 1:02d}", position=r + 1) for r in range(-(-b.spines // 8))
    ]
    spine_pp_racks = [
        Rack(row=spine_row, name=f"SP-PP{r + 1:02d}", position=100 + r) for r in range(-(-b.sus // 2))
    ]
    racks += spine_racks + spine_pp_racks
    bulk.bulk_insert(Rack, racks, **w)

    # --- devices, cages, ports -------------------------------------------------------------
    leaves: list[list[_Rec]] = []
    leaf_cages: dict[int, list[_Rec]] = {}
    spines: list[_Rec] = []
    spine_cages: dict[int, list[_Rec]] = {}
    for s in range(b.sus):
        row_leaves = []
        for r in range(NICS):
            leaf = b.device(
                f"leaf-s{s + 1:02d}-r{r + 1}",
                DeviceRole.LEAF,
                su_net_rack[s],
                1 + r,
                1,
                V["Arista"],
                "7060DX5-64S",
            )
            row_leaves.append(leaf)
            leaf_cages[id(leaf)] = [
                b.cage(leaf, f"OSFP{c + 1}", c + 1, FormFactor.OSFP) for c in range(LEAF_CAGES)
            ]
        leaves.append(row_leaves)
    for i in range(b.spines):
        sp = b.device(
            f"spine-{i + 1:02d}",
            DeviceRole.SPINE,
            spine_racks[i // 8],
            1 + (i % 8) * 2,
            2,
            V["Arista"],
            "7800R4-64",
        )
        spines.append(sp)
        spine_cages[id(sp)] = [
            b.cage(sp, f"OSFP{c + 1}", c + 1, FormFactor.OSFP) for c in range(SPINE_PORTS // 2)
        ]

    def twin_ports(dev, cages, names):
        out = []
        for c, cage in enumerate(cages):
            for k in range(2):
                out.append(
                    b.port(
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

    leaf_ports = {
        id(lf): twin_ports(lf, leaf_cages[id(lf)], lambda c, k: f"Ethernet{c + 1}/{k + 1}")
        for row_l in leaves
        for lf in row_l
    }
    spine_ports = {
        id(sp): twin_ports(sp, spine_cages[id(sp)], lambda c, k: f"Ethernet{c + 1}/{k + 1}") for sp in spines
    }

    nodes: list[tuple[_Rec, list[_Rec], _Rec, _Rec, Rack, int]] = []
    fe_switch: dict[str, tuple[_Rec, list[_Rec], list[_Rec]]] = {}
    mgmt_switch: dict[str, tuple[_Rec, list[_Rec]]] = {}
    for n in range(b.nodes):
        s, i = divmod(n, NODES_PER_SU)
        rack = su_gpu_racks[s][i // NODES_PER_RACK]
        slot = i % NODES_PER_RACK
        if rack.name not in fe_switch:
            fe = b.device(f"fe-{rack.name.lower()}", DeviceRole.LEAF, rack, 42, 1, V["Arista"], "7050DX4-32S")
            fe_c = [
                b.cage(fe, f"QSFP{c + 1}", c + 1, FormFactor.QSFP56, lanes=4) for c in range(NODES_PER_RACK)
            ]
            fe_p = [
                b.port(fe, f"Ethernet{c + 1}/1", cage=cg, connector=1, lane_count=4, speed_gbps=200)
                for c, cg in enumerate(fe_c)
            ]
            fe_switch[rack.name] = (fe, fe_c, fe_p)
            mg = b.device(
                f"mgmt-{rack.name.lower()}", DeviceRole.MGMT_SWITCH, rack, 43, 1, V["Arista"], "7010TX-48"
            )
            mg_p = [
                b.port(
                    mg, f"Ethernet{c + 1}", fabric=Fabric.OOB, connector_type=ConnectorType.RJ45, speed_gbps=1
                )
                for c in range(NODES_PER_RACK)
            ]
            mgmt_switch[rack.name] = (mg, mg_p)
        node = b.device(
            f"gpu-{n + 1:04d}", DeviceRole.GPU_NODE, rack, 2 + slot * 9, 8, V["Supermicro"], "SYS-821GE-TNHR"
        )
        cages = [b.cage(node, f"OSFP{c + 1}", c + 1, FormFactor.OSFP) for c in range(NICS // 2)]
        nics = twin_ports(node, cages, lambda c, k: f"eth{2 * c + k}")
        fe_cage = b.cage(node, "FE1", 10, FormFactor.QSFP56, lanes=4)
        fe_port = b.port(node, "fe0", cage=fe_cage, connector=1, lane_count=4, speed_gbps=200)
        bmc = b.port(node, "bmc", fabric=Fabric.OOB, connector_type=ConnectorType.RJ45, speed_gbps=1)
        nodes.append((node, nics, fe_port, bmc, rack, slot))

    # Patch panels: per SU in the network rack, mirrored in the spine row.
    uplinks_per_su = NICS * (LEAF_CAGES // 2) * 2
    trunks_per_su = -(-uplinks_per_su // POSITIONS)
    panels_per_su = -(-trunks_per_su // PANEL_REARS)
    su_panels: list[list[tuple[list[_Rec], list[_Rec]]]] = []
    sp_panels: list[list[tuple[list[_Rec], list[_Rec]]]] = []
    mappings: list[tuple[_Rec, _Rec, int]] = []
    for s in range(b.sus):
        mine, theirs = [], []
        for p in range(panels_per_su):
            for side, rack, u, store in (
                ("N", su_net_rack[s], 20 + 2 * p, mine),
                ("SP", spine_pp_racks[s // 2], 1 + ((s % 2) * panels_per_su + p) * 2, theirs),
            ):
                pp = b.device(
                    f"pp-{rack.name.lower()}-{s + 1:02d}{p + 1}"
                    if side == "SP"
                    else f"pp-{rack.name.lower()}-{p + 1}",
                    DeviceRole.PATCH_PANEL,
                    rack,
                    u,
                    2,
                    V["Corning"],
                    "EDGE8-2U-48",
                )
                rears = [
                    b.port(
                        pp,
                        f"Rear {r + 1}",
                        kind=PortKind.REAR,
                        positions=POSITIONS,
                        connector_type=ConnectorType.MPO,
                        fibre_count=24,
                        pinned=True,
                        polish=Polish.APC,
                    )
                    for r in range(PANEL_REARS)
                ]
                fronts = []
                for r in range(PANEL_REARS):
                    for pos in range(POSITIONS):
                        f = b.port(
                            pp,
                            f"Front {r * POSITIONS + pos + 1}",
                            kind=PortKind.FRONT,
                            connector_type=ConnectorType.MPO,
                            fibre_count=12,
                            pinned=True,
                            polish=Polish.APC,
                        )
                        fronts.append(f)
                        mappings.append((f, rears[r], pos + 1))
                store.append((rears, fronts))
        su_panels.append(mine)
        sp_panels.append(theirs)

    b.device_t.write(**w)
    b.cage_t.write(**w)
    b.port_t.write(**w)
    aliases = [[p.pk, p.device.pk, p.name, "canonical", now] for p in b.ports]
    for node, nics, *_ in nodes:
        for k, p in enumerate(nics):
            aliases.append([p.pk, node.pk, f"mlx5_{MLX5[k]}", "mlx5", now])
            aliases.append([p.pk, node.pk, f"ibp{IB_BUS[k]}s0", "ib", now])
    bulk.bulk_insert_rows(PortAlias, ["port_id", "device_id", "name", "source", "valid_from"], aliases, **w)
    bulk.bulk_insert_rows(
        PortMapping,
        ["front_port_id", "rear_port_id", "rear_position"],
        [[f.pk, r.pk, pos] for f, r, pos in mappings],
        **w,
    )

    # --- transceivers -----------------------------------------------------------------------
    xcvr_t = _Table(Transceiver)
    xcvrs = xcvr_t.recs
    placements: list[tuple[_Rec, _Rec, date]] = []

    def module_for(cage, models_, installed):
        m = models_[rng.randrange(len(models_))]
        lot_week = installed - timedelta(days=rng.randint(30, 120))
        b.serial_seq += 1
        x = xcvr_t.new(
            model=m,
            serial=f"{m.part_number[:2].upper()}{lot_week:%y%W}FT{b.serial_seq:06d}",
            firmware=rng.choice(["47.120.0508", "47.140.0602", "48.010.0200"]),
            date_code=f"{lot_week:%y%m%d}",
            status=TransceiverStatus.INSTALLED,
            cage=cage,
            acquired_on=lot_week + timedelta(days=14),
        )
        placements.append((x, cage, installed))

    su_install = [b.install_day(730, 60) for _ in range(b.sus)]
    for n, (_node, nics, *_rest) in enumerate(nodes):
        d = su_install[n // NODES_PER_SU] + timedelta(days=rng.randint(0, 10))
        for cage in dict.fromkeys(p.cage for p in nics):
            module_for(cage, nic_models, d)
    for s in range(b.sus):
        for leaf in leaves[s]:
            for cage in leaf_cages[id(leaf)]:
                module_for(cage, sw_models, su_install[s])
    spine_day = b.install_day(740, 700)
    for sp in spines:
        for cage in spine_cages[id(sp)]:
            module_for(cage, sw_models, spine_day)
    xcvr_t.write(**w)
    bulk.bulk_insert_rows(
        TransceiverPlacement,
        ["transceiver_id", "cage_id", "installed_at"],
        [[x.pk, c.pk, _dt(d)] for x, c, d in placements],
        **w,
    )

    # --- cables -----------------------------------------------------------------------------
    mpo = dict(conn=ConnectorType.MPO, fibres=12, polish=Polish.APC, a_pinned=False, b_pinned=False)
    for n, (_node, nics, fe_port, bmc, rack, slot) in enumerate(nodes):
        s, i = divmod(n, NODES_PER_SU)
        d = su_install[s] + timedelta(days=rng.randint(0, 10))
        for k, nic in enumerate(nics):
            lp = leaf_ports[id(leaves[s][k])][i]
            length = 3 + (i // NODES_PER_RACK) * 1.5 + rng.choice([0, 0.5, 1])
            c = b.cable(
                CableKind.SMF_OS2,
                CableRole.JUMPER,
                (nic.cage, nic.connector),
                (lp.cage, lp.connector),
                length=length,
                vendor=V[rng.choice(["Corning", "Panduit"])],
                install=d,
                polarity=Polarity.B,
                part="MTP12-APC-B",
                **mpo,
            )
            b.links.append((nic, lp, [c], "400GBASE-DR4"))
        fe, fe_c, fe_p = fe_switch[rack.name]
        dac = b.cable(
            CableKind.DAC,
            CableRole.DIRECT,
            (fe_port.cage, 1),
            (fe_c[slot], 1),
            length=rng.choice([1.5, 2, 2.5]),
            vendor=V["Amphenol"],
            install=d,
            part="NJAAKK-N911",
            serials=(f"APF{rng.randrange(10**8):08d}", f"APF{rng.randrange(10**8):08d}"),
        )
        b.links.append((fe_port, fe_p[slot], [dac], "200GBASE-CR4"))
        mg, mg_p = mgmt_switch[rack.name]
        b.cable(
            CableKind.CAT6A,
            CableRole.DIRECT,
            bmc,
            mg_p[slot],
            length=rng.choice([2, 3]),
            vendor=V["Panduit"],
            install=d,
        )

    spine_fill = [0] * b.spines
    for s in range(b.sus):
        d = su_install[s]
        trunks = {}
        for r, leaf in enumerate(leaves[s]):
            ups = leaf_ports[id(leaf)][LEAF_CAGES:]  # second half: uplinks
            for j, lp in enumerate(ups):
                k = r * len(ups) + j
                t, pos = divmod(k, POSITIONS)
                pnl, rear = divmod(t, PANEL_REARS)
                n_rears, n_fronts = su_panels[s][pnl]
                f_rears, f_fronts = sp_panels[s][pnl]
                if t not in trunks:
                    trunks[t] = b.cable(
                        CableKind.SMF_OS2,
                        CableRole.TRUNK,
                        n_rears[rear],
                        f_rears[rear],
                        length=rng.randint(25, 60),
                        vendor=V["Corning"],
                        install=d - timedelta(days=7),
                        polarity=Polarity.B,
                        conn=ConnectorType.MPO,
                        fibres=24,
                        polish=Polish.APC,
                        a_pinned=False,
                        b_pinned=False,
                        part="EDGE8-144F-B",
                    )
                gl = s * NICS + r
                spi = (gl * len(ups) + j) % b.spines
                sp = spines[spi]
                sport = spine_ports[id(sp)][spine_fill[spi]]
                spine_fill[spi] += 1
                front_n = n_fronts[rear * POSITIONS + pos]
                front_f = f_fronts[rear * POSITIONS + pos]
                j1 = b.cable(
                    CableKind.SMF_OS2,
                    CableRole.JUMPER,
                    (lp.cage, lp.connector),
                    front_n,
                    length=rng.choice([2, 3]),
                    vendor=V["Corning"],
                    install=d,
                    polarity=Polarity.A,
                    part="MTP12-APC-A",
                    **mpo,
                )
                j2 = b.cable(
                    CableKind.SMF_OS2,
                    CableRole.JUMPER,
                    front_f,
                    (sport.cage, sport.connector),
                    length=rng.choice([5, 8, 10]),
                    vendor=V["Corning"],
                    install=d,
                    polarity=Polarity.B,
                    part="MTP12-APC-B",
                    **mpo,
                )
                b.links.append((lp, sport, [j1, trunks[t], j2], "400GBASE-DR4"))

    # --- test history (planned before the cables are written, so their first history row
    # already carries the retest due date and status) ----------------------------------------
    plans: list[tuple[Cable, int, float, list[tuple[date, list[float]]]]] = []
    for c in b.cables:
        if c.kind not in CableKind.fibre():
            continue
        fibres = 8 if c.role != CableRole.TRUNK else 24
        budget = 0.75 * 2 + 0.5 * float(c.length_m) / 1000 if c.role == CableRole.TRUNK else 1.5
        runs = [c.install_date + timedelta(days=1)]
        while runs[-1] + timedelta(days=b.interval) < as_of - timedelta(days=rng.randint(-10, 30)):
            runs.append(runs[-1] + timedelta(days=b.interval + rng.randint(-5, 12)))
            if rng.random() < 0.35 or len(runs) >= 3:  # sites fall behind on retests
                break
        base = rng.uniform(0.25, 0.7)
        sessions = []
        for n_run, when in enumerate(runs):
            drift = 0.0 if n_run == 0 else rng.choice([0, 0, 0, 0.05, 0.1, 0.6, 1.2])
            sessions.append(
                (when, [round(base + drift + rng.uniform(-0.08, 0.12), 2) for _ in range(fibres)])
            )
        if max(sessions[-1][1]) > budget:
            c.status = CableStatus.DEGRADED
        c.retest_due = runs[-1] + timedelta(days=b.interval)
        plans.append((c, fibres, budget, sessions))

    b.cable_t.write(**w)
    b.end_t.write(**w)

    # --- links ------------------------------------------------------------------------------
    link_t, segs = _Table(Link), []
    link_objs = link_t.recs
    for a, z, path, pmd in b.links:
        a_, z_ = (a, z) if a.pk < z.pk else (z, a)
        budget = 3.0 if pmd == "400GBASE-DR4" else None
        link_t.new(
            a_port_id=a_.pk,
            b_port_id=z_.pk,
            pmd=pmd,
            fec=FecType.KP4,
            speed_gbps=a.speed_gbps,
            lanes=a.lane_count,
            lane_rate_gbaud=106.25 if a.speed_gbps == 400 else 53.125,
            loss_budget_db=budget,
            link_class="leaf-spine" if len(path) > 1 else ("frontend" if pmd.endswith("CR4") else "rail"),
        )
    link_t.write(**w)
    for link, (_, _, path, _) in zip(link_objs, b.links, strict=True):
        segs += [[link.pk, i, c.pk] for i, c in enumerate(path)]
    bulk.bulk_insert_rows(LinkSegment, ["link_id", "seq", "cable_id"], segs, **w)

    test_t, results = _Table(CableTest), []
    tests = test_t.recs
    for c, _fibres, budget, sessions in plans:
        for n_run, (when, losses) in enumerate(sessions):
            worst = max(losses)
            margin = round(budget - worst, 2)
            verdict = Verdict.PASS if margin >= 0.3 else (Verdict.MARGINAL if margin >= 0 else Verdict.FAIL)
            t = test_t.new(
                cable_id=c.pk,
                kind=TestKind.OLTS,
                tested_at=_dt(when),
                instrument="Fluke CertiFiber Pro",
                instrument_serial=f"CFP{seed:02d}{rng.randrange(1000):03d}",
                reference_method=ReferenceMethod.ONE_JUMPER,
                wavelength_nm=1310,
                loss_db=worst,
                budget_db=round(budget, 2),
                margin_db=margin,
                verdict=verdict,
                is_baseline=n_run == 0,
            )
            results.append((t, losses))
            if c.role == CableRole.TRUNK:  # long enough for an OTDR: a trace summary per session
                otdr_loss = round(max(losses) - 0.04, 2)
                otdr_margin = round(budget - otdr_loss, 2)
                test_t.new(
                    cable_id=c.pk,
                    kind=TestKind.OTDR,
                    tested_at=_dt(when),
                    instrument="EXFO FTBx-730C",
                    wavelength_nm=1310,
                    loss_db=otdr_loss,
                    budget_db=round(budget, 2),
                    margin_db=otdr_margin,
                    verdict=Verdict.PASS
                    if otdr_margin >= 0.3
                    else (Verdict.MARGINAL if otdr_margin >= 0 else Verdict.FAIL),
                    is_baseline=n_run == 0,
                    details={"source": "demo", "summary_only": True},
                )
    for c in b.cables:  # sealed DAC/ACC/AOC: a link qualification at bring-up
        if c.kind in CableKind.sealed():
            test_t.new(
                cable_id=c.pk,
                kind=TestKind.QUALIFICATION,
                tested_at=_dt(c.install_date + timedelta(days=1)),
                verdict=Verdict.PASS,
                is_baseline=True,
                details={"source": "demo", "link_up": True, "soak_minutes": 15, "pre_fec_ber": 1e-9},
            )
    test_t.write(**w)
    bulk.bulk_insert_rows(
        FibreResult,
        ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"],
        [
            [t.pk, i + 1, 1310, Direction.A_TO_B, loss, Verdict.PASS if loss <= t.budget_db else Verdict.FAIL]
            for t, losses in results
            for i, loss in enumerate(losses)
        ],
        **w,
    )
    failures = demo_seed_failures(
        site=site, seed=seed, as_of=as_of, afr=app_settings.annual_failure_rate, w=w
    )
    _analyze_on_commit()
    return SeedReport(
        site=site_name,
        counts={
            **failures,
            "gpus": gpus,
            "nodes": b.nodes,
            "leaves": b.leaves,
            "spines": b.spines,
            "devices": len(b.devices),
            "ports": len(b.ports),
            "cables": len(b.cables),
            "transceivers": len(xcvrs),
            "links": len(link_objs),
            "tests": len(tests),
        },
    )
