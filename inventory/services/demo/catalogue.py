"""Demo seed steps that come first: the team, vendors, transceiver catalogue and the site's racks."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.core.choices import ConnectorType, FormFactor, Polish
from inventory.db import bulk
from inventory.models import Rack, Room, Row, Site, Team, TransceiverModel, Vendor
from inventory.services.demo.builder import NODES_PER_RACK, NODES_PER_SU, Builder

DEMO_TEAM = "Fabric ops"  # the demo hall's team: its technicians work there (``demo.users``)
VENDOR_NAMES = [
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
# 800G twin-port OSFP (2x 400GBASE-DR4): the module in every NIC and switch cage
TWIN_DR4 = dict(
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

# 200G QSFP56 SR4 (multi-mode, 850 nm, MPO-12/UPC): the optical front-end ports (``optical_front_end``)
QSFP56_SR4 = dict(
    form_factor=FormFactor.QSFP56,
    pmd="200GBASE-SR4",
    speed_gbps=200,
    lanes=4,
    lane_rate_gbps=50,
    logical_ports=1,
    connector_type=ConnectorType.MPO,
    connector_count=1,
    fibre_count=12,
    polish=Polish.UPC,
    pinned=True,
    wavelength_nm=850,
    single_mode=False,
    reach_m=100,
)


@dataclass
class Catalogue:
    team: Team
    vendors: dict[str, Vendor]
    nic_models: list[TransceiverModel]
    sw_models: list[TransceiverModel]
    fe_sr4: TransceiverModel | None = None


@dataclass
class Locations:
    site: Site
    su_gpu_racks: list[list[Rack]]
    su_net_rack: list[Rack]
    spine_racks: list[Rack]
    spine_pp_racks: list[Rack]


def seed_catalogue(*, w: dict) -> Catalogue:
    """People, vendors, catalogue: reused when an earlier seed already wrote them."""
    team = (
        Team.objects.filter(name=DEMO_TEAM).first()
        or bulk.bulk_insert(Team, [Team(name=DEMO_TEAM, email="fabric-ops@example.com")], **w)[0]
    )
    existing = {v.name: v for v in Vendor.objects.filter(name__in=VENDOR_NAMES)}
    new_vendors = [Vendor(name=n, slug=n.lower()) for n in VENDOR_NAMES if n not in existing]
    bulk.bulk_insert(Vendor, new_vendors, **w)
    V = {**existing, **{v.name: v for v in new_vendors}}

    def xmodel(vendor, part, **kw):
        return (
            TransceiverModel.objects.filter(vendor=V[vendor], part_number=part).first()
            or bulk.bulk_insert(
                TransceiverModel, [TransceiverModel(vendor=V[vendor], part_number=part, **kw)], **w
            )[0]
        )

    nic_models = [
        xmodel("NVIDIA", "MMS4X00-NM-FLT", **TWIN_DR4),
        xmodel("Innolight", "T-OS8FNT-N00-FLT", **TWIN_DR4),
    ]
    sw_models = [
        xmodel("NVIDIA", "MMS4X00-NM", **TWIN_DR4),
        xmodel("Eoptolink", "EOLO-1682HG-05", **TWIN_DR4),
        xmodel("Coherent", "FTCD8613E1PCM", **TWIN_DR4),
    ]
    fe_sr4 = xmodel("NVIDIA", "MMA1T00-VS", **QSFP56_SR4)
    return Catalogue(team=team, vendors=V, nic_models=nic_models, sw_models=sw_models, fe_sr4=fe_sr4)


def seed_locations(b: Builder, *, seed: int, team: Team, w: dict) -> Locations:
    """The site, its hall, a row per SU plus the spine row, and their racks."""
    site = bulk.bulk_insert(Site, [Site(name=b.site_name, slug=f"demo-{seed}", team=team)], **w)[0]
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
    return Locations(
        site=site,
        su_gpu_racks=su_gpu_racks,
        su_net_rack=su_net_rack,
        spine_racks=spine_racks,
        spine_pp_racks=spine_pp_racks,
    )
