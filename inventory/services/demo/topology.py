"""Demo seed steps for the equipment: switches, GPU nodes and patch panels with their cages and ports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from inventory.core.choices import ConnectorType, DeviceRole, Fabric, FormFactor, Polish, PortKind
from inventory.db import bulk
from inventory.models import GpuNicMap, PortAlias, PortMapping, Rack, Vendor
from inventory.services.demo.builder import (
    IB_BUS,
    LEAF_CAGES,
    MLX5,
    NICS,
    NODES_PER_RACK,
    NODES_PER_SU,
    PANEL_REARS,
    POSITIONS,
    SPINE_PORTS,
    Builder,
    Rec,
)
from inventory.services.demo.catalogue import Locations

GPU_NODE_MODEL = "SYS-821GE-TNHR"


def gpu_nic_map() -> list[GpuNicMap]:
    """The GPU node's GPU-to-NIC map: GPU k sits on the PCIe switch of the k-th compute NIC
    (``eth<k>``, whose ``mlx5_N`` name does not follow that order), which reaches rail k + 1."""
    return [
        GpuNicMap(device_model=GPU_NODE_MODEL, gpu=k, port_name=f"eth{k}", rail=k + 1) for k in range(NICS)
    ]


@dataclass
class Switches:
    """The fabric's leaves (per SU, one per rail) and spines, keyed by ``id()`` of their record."""

    leaves: list[list[Rec]] = field(default_factory=list)
    leaf_cages: dict[int, list[Rec]] = field(default_factory=dict)
    leaf_ports: dict[int, list[Rec]] = field(default_factory=dict)
    spines: list[Rec] = field(default_factory=list)
    spine_cages: dict[int, list[Rec]] = field(default_factory=dict)
    spine_ports: dict[int, list[Rec]] = field(default_factory=dict)


@dataclass
class Nodes:
    """GPU nodes ``(node, nics, fe_port, bmc, rack, slot)`` and each GPU rack's two switches."""

    nodes: list[tuple[Rec, list[Rec], Rec, Rec, Rack, int]] = field(default_factory=list)
    fe_switch: dict[str, tuple[Rec, list[Rec], list[Rec]]] = field(default_factory=dict)
    mgmt_switch: dict[str, tuple[Rec, list[Rec]]] = field(default_factory=dict)


@dataclass
class Panels:
    """Per SU: ``(rears, fronts)`` of each panel in the network rack and its twin in the spine row."""

    su_panels: list[list[tuple[list[Rec], list[Rec]]]] = field(default_factory=list)
    sp_panels: list[list[tuple[list[Rec], list[Rec]]]] = field(default_factory=list)
    mappings: list[tuple[Rec, Rec, int]] = field(default_factory=list)


def seed_switches(b: Builder, *, loc: Locations, vendors: dict[str, Vendor]) -> Switches:
    """Rail leaves in each SU's network rack and the spines, then their twin-port OSFP ports."""
    sw = Switches()
    for s in range(b.sus):
        row_leaves = []
        for r in range(NICS):
            leaf = b.device(
                f"leaf-s{s + 1:02d}-r{r + 1}",
                DeviceRole.LEAF,
                loc.su_net_rack[s],
                1 + r,
                1,
                vendors["Arista"],
                "7060DX5-64S",
            )
            row_leaves.append(leaf)
            sw.leaf_cages[id(leaf)] = [
                b.cage(leaf, f"OSFP{c + 1}", c + 1, FormFactor.OSFP) for c in range(LEAF_CAGES)
            ]
        sw.leaves.append(row_leaves)
    for i in range(b.spines):
        sp = b.device(
            f"spine-{i + 1:02d}",
            DeviceRole.SPINE,
            loc.spine_racks[i // 8],
            1 + (i % 8) * 2,
            2,
            vendors["Arista"],
            "7800R4-64",
        )
        sw.spines.append(sp)
        sw.spine_cages[id(sp)] = [
            b.cage(sp, f"OSFP{c + 1}", c + 1, FormFactor.OSFP) for c in range(SPINE_PORTS // 2)
        ]
    sw.leaf_ports = {
        id(lf): b.twin_ports(lf, sw.leaf_cages[id(lf)], lambda c, k: f"Ethernet{c + 1}/{k + 1}")
        for row_l in sw.leaves
        for lf in row_l
    }
    sw.spine_ports = {
        id(sp): b.twin_ports(sp, sw.spine_cages[id(sp)], lambda c, k: f"Ethernet{c + 1}/{k + 1}")
        for sp in sw.spines
    }
    return sw


def seed_nodes(b: Builder, *, loc: Locations, vendors: dict[str, Vendor]) -> Nodes:
    """GPU nodes (8 rail NICs, a front-end port, a BMC); a front-end and a management switch per rack."""
    out = Nodes()
    for n in range(b.nodes):
        s, i = divmod(n, NODES_PER_SU)
        rack = loc.su_gpu_racks[s][i // NODES_PER_RACK]
        slot = i % NODES_PER_RACK
        if rack.name not in out.fe_switch:
            fe = b.device(
                f"fe-{rack.name.lower()}", DeviceRole.LEAF, rack, 42, 1, vendors["Arista"], "7050DX4-32S"
            )
            fe_c = [
                b.cage(fe, f"QSFP{c + 1}", c + 1, FormFactor.QSFP56, lanes=4) for c in range(NODES_PER_RACK)
            ]
            fe_p = [
                b.port(fe, f"Ethernet{c + 1}/1", cage=cg, connector=1, lane_count=4, speed_gbps=200)
                for c, cg in enumerate(fe_c)
            ]
            out.fe_switch[rack.name] = (fe, fe_c, fe_p)
            mg = b.device(
                f"mgmt-{rack.name.lower()}",
                DeviceRole.MGMT_SWITCH,
                rack,
                43,
                1,
                vendors["Arista"],
                "7010TX-48",
            )
            mg_p = [
                b.port(
                    mg, f"Ethernet{c + 1}", fabric=Fabric.OOB, connector_type=ConnectorType.RJ45, speed_gbps=1
                )
                for c in range(NODES_PER_RACK)
            ]
            out.mgmt_switch[rack.name] = (mg, mg_p)
        node = b.device(
            f"gpu-{n + 1:04d}",
            DeviceRole.GPU_NODE,
            rack,
            2 + slot * 9,
            8,
            vendors["Supermicro"],
            GPU_NODE_MODEL,
        )
        cages = [b.cage(node, f"OSFP{c + 1}", c + 1, FormFactor.OSFP) for c in range(NICS // 2)]
        nics = b.twin_ports(node, cages, lambda c, k: f"eth{2 * c + k}")
        fe_cage = b.cage(node, "FE1", 10, FormFactor.QSFP56, lanes=4)
        fe_port = b.port(node, "fe0", cage=fe_cage, connector=1, lane_count=4, speed_gbps=200)
        bmc = b.port(node, "bmc", fabric=Fabric.OOB, connector_type=ConnectorType.RJ45, speed_gbps=1)
        out.nodes.append((node, nics, fe_port, bmc, rack, slot))
    return out


def _panel(b: Builder, name: str, rack: Rack, u: int, vendor: Vendor, mappings: list) -> tuple[list, list]:
    """A 2U MPO panel: four 24-fibre rears, each fanned out to twelve 12-fibre fronts."""
    pp = b.device(name, DeviceRole.PATCH_PANEL, rack, u, 2, vendor, "EDGE8-2U-48")
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
    return rears, fronts


def seed_panels(b: Builder, *, loc: Locations, vendors: dict[str, Vendor]) -> Panels:
    """Patch panels: per SU in the network rack, mirrored in the spine row."""
    uplinks_per_su = NICS * (LEAF_CAGES // 2) * 2
    trunks_per_su = -(-uplinks_per_su // POSITIONS)
    panels_per_su = -(-trunks_per_su // PANEL_REARS)
    out = Panels()
    for s in range(b.sus):
        mine, theirs = [], []
        for p in range(panels_per_su):
            for side, rack, u, store in (
                ("N", loc.su_net_rack[s], 20 + 2 * p, mine),
                ("SP", loc.spine_pp_racks[s // 2], 1 + ((s % 2) * panels_per_su + p) * 2, theirs),
            ):
                name = (
                    f"pp-{rack.name.lower()}-{s + 1:02d}{p + 1}"
                    if side == "SP"
                    else f"pp-{rack.name.lower()}-{p + 1}"
                )
                store.append(_panel(b, name, rack, u, vendors["Corning"], out.mappings))
        out.su_panels.append(mine)
        out.sp_panels.append(theirs)
    return out


def write_equipment(b: Builder, *, nodes: Nodes, panels: Panels, now: datetime, w: dict) -> None:
    """Write devices, cages and ports; each port's canonical name and the NICs' kernel names
    as aliases; the panels' front-to-rear mappings."""
    b.device_t.write(**w)
    b.cage_t.write(**w)
    b.port_t.write(**w)
    aliases = [[p.pk, p.device.pk, p.name, "canonical", now] for p in b.ports]
    for node, nics, *_ in nodes.nodes:
        for k, p in enumerate(nics):
            aliases.append([p.pk, node.pk, f"mlx5_{MLX5[k]}", "mlx5", now])
            aliases.append([p.pk, node.pk, f"ibp{IB_BUS[k]}s0", "ib", now])
    bulk.bulk_insert_rows(PortAlias, ["port_id", "device_id", "name", "source", "valid_from"], aliases, **w)
    GpuNicMap.objects.bulk_create(gpu_nic_map(), ignore_conflicts=True)
    bulk.bulk_insert_rows(
        PortMapping,
        ["front_port_id", "rear_port_id", "rear_position"],
        [[f.pk, r.pk, pos] for f, r, pos in panels.mappings],
        **w,
    )
