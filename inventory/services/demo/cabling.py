"""Demo seed steps for what plugs in: optical modules in every cage, and the cables between ports."""

from __future__ import annotations

from datetime import date, timedelta

from inventory.core.choices import CableKind, CableRole, ConnectorType, Polarity, Polish, TransceiverStatus
from inventory.db import bulk
from inventory.models import Transceiver, TransceiverModel, TransceiverPlacement, Vendor
from inventory.services.demo.builder import (
    LEAF_CAGES,
    NICS,
    NODES_PER_RACK,
    NODES_PER_SU,
    PANEL_REARS,
    POSITIONS,
    Builder,
    Rec,
    Table,
    dt,
)
from inventory.services.demo.catalogue import Catalogue
from inventory.services.demo.topology import Nodes, Panels, Switches

# MPO-12/APC jumper ends (unpinned: the modules and panel fronts carry the pins)
MPO_JUMPER = dict(conn=ConnectorType.MPO, fibres=12, polish=Polish.APC, a_pinned=False, b_pinned=False)
# Multi-mode MPO-12/UPC jumper ends: the flat polish of SR4 optics
MPO_MM_JUMPER = dict(conn=ConnectorType.MPO, fibres=12, polish=Polish.UPC, a_pinned=False, b_pinned=False)
OPTICAL_FE_EVERY = 8  # every 8th node's front-end port runs 200GBASE-SR4 over OM4 instead of a DAC


def optical_front_end(n: int) -> bool:
    """Node ``n`` reaches its front-end switch over OM4 multi-mode (SR4 modules), not a DAC: the
    demo's multi-mode, UPC-polished runs (850 and 1300 nm tests, a 1.9 dB SR4 channel limit)."""
    return n % OPTICAL_FE_EVERY == OPTICAL_FE_EVERY - 1


def seed_transceivers(
    b: Builder, *, cat: Catalogue, nodes: Nodes, switches: Switches, w: dict
) -> tuple[list[date], int]:
    """A module in every NIC, leaf and spine cage, placed on its SU's install day.

    Returns each SU's install day (the cabling follows it) and the number of modules.
    """
    xcvr_t = Table(Transceiver)
    placements: list[tuple[Rec, Rec, date]] = []
    rng = b.rng

    def module_for(cage, models_: list[TransceiverModel], installed: date) -> None:
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
    for n, (_node, nics, *_rest) in enumerate(nodes.nodes):
        d = su_install[n // NODES_PER_SU] + timedelta(days=rng.randint(0, 10))
        for cage in dict.fromkeys(p.cage for p in nics):
            module_for(cage, cat.nic_models, d)
    for s in range(b.sus):
        for leaf in switches.leaves[s]:
            for cage in switches.leaf_cages[id(leaf)]:
                module_for(cage, cat.sw_models, su_install[s])
    spine_day = b.install_day(740, 700)
    for sp in switches.spines:
        for cage in switches.spine_cages[id(sp)]:
            module_for(cage, cat.sw_models, spine_day)
    # SR4 modules at both ends of the optical front-end links, numbered apart (no random draws,
    # so the rest of the seed is unchanged).
    for n, (_node, _nics, fe_port, _bmc, rack, slot) in enumerate(nodes.nodes):
        if cat.fe_sr4 is None or not optical_front_end(n):
            continue
        d = su_install[n // NODES_PER_SU]
        for k, cage in enumerate((fe_port.cage, nodes.fe_switch[rack.name][1][slot])):
            x = xcvr_t.new(
                model=cat.fe_sr4,
                serial=f"MT{d:%y%W}SR{n:05d}{k}",
                firmware="16.35.2000",
                date_code=f"{d - timedelta(days=60):%y%m%d}",
                status=TransceiverStatus.INSTALLED,
                cage=cage,
                acquired_on=d - timedelta(days=45),
            )
            placements.append((x, cage, d))
    xcvr_t.write(**w)
    bulk.bulk_insert_rows(
        TransceiverPlacement,
        ["transceiver_id", "cage_id", "installed_at"],
        [[x.pk, c.pk, dt(d)] for x, c, d in placements],
        **w,
    )
    return su_install, len(xcvr_t.recs)


def seed_node_cables(
    b: Builder, *, nodes: Nodes, switches: Switches, su_install: list[date], vendors: dict[str, Vendor]
) -> None:
    """Per node: a rail jumper from each NIC to its rail's leaf, a front-end DAC and a BMC patch."""
    rng = b.rng
    for n, (_node, nics, fe_port, bmc, rack, slot) in enumerate(nodes.nodes):
        s, i = divmod(n, NODES_PER_SU)
        d = su_install[s] + timedelta(days=rng.randint(0, 10))
        for k, nic in enumerate(nics):
            lp = switches.leaf_ports[id(switches.leaves[s][k])][i]
            length = 3 + (i // NODES_PER_RACK) * 1.5 + rng.choice([0, 0.5, 1])
            c = b.cable(
                CableKind.SMF_OS2,
                CableRole.JUMPER,
                (nic.cage, nic.connector),
                (lp.cage, lp.connector),
                length=length,
                vendor=vendors[rng.choice(["Corning", "Panduit"])],
                install=d,
                polarity=Polarity.B,
                part="MTP12-APC-B",
                **MPO_JUMPER,
            )
            b.links.append((nic, lp, [c], "400GBASE-DR4"))
        _fe, fe_c, fe_p = nodes.fe_switch[rack.name]
        length = rng.choice([1.5, 2, 2.5])
        serials = (f"APF{rng.randrange(10**8):08d}", f"APF{rng.randrange(10**8):08d}")
        if optical_front_end(n):  # the same draws either way: the rest of the seed is unchanged
            om4 = b.cable(
                CableKind.MMF_OM4,
                CableRole.JUMPER,
                (fe_port.cage, 1),
                (fe_c[slot], 1),
                length=length + 1,
                vendor=vendors["Panduit"],
                install=d,
                polarity=Polarity.B,
                part="MTP12-OM4-UPC-B",
                **MPO_MM_JUMPER,
            )
            b.links.append((fe_port, fe_p[slot], [om4], "200GBASE-SR4"))
        else:
            dac = b.cable(
                CableKind.DAC,
                CableRole.DIRECT,
                (fe_port.cage, 1),
                (fe_c[slot], 1),
                length=length,
                vendor=vendors["Amphenol"],
                install=d,
                part="NJAAKK-N911",
                serials=serials,
            )
            b.links.append((fe_port, fe_p[slot], [dac], "200GBASE-CR4"))
        _mg, mg_p = nodes.mgmt_switch[rack.name]
        b.cable(
            CableKind.CAT6A,
            CableRole.DIRECT,
            bmc,
            mg_p[slot],
            length=rng.choice([2, 3]),
            vendor=vendors["Panduit"],
            install=d,
        )


def seed_uplink_cables(
    b: Builder, *, switches: Switches, panels: Panels, su_install: list[date], vendors: dict[str, Vendor]
) -> None:
    """Leaf uplinks: leaf -> jumper -> SU panel -> MPO trunk -> spine-row panel -> jumper -> spine."""
    rng = b.rng
    spine_fill = [0] * b.spines
    for s in range(b.sus):
        d = su_install[s]
        trunks = {}
        for r, leaf in enumerate(switches.leaves[s]):
            ups = switches.leaf_ports[id(leaf)][LEAF_CAGES:]  # second half: uplinks
            for j, lp in enumerate(ups):
                k = r * len(ups) + j
                t, pos = divmod(k, POSITIONS)
                pnl, rear = divmod(t, PANEL_REARS)
                n_rears, n_fronts = panels.su_panels[s][pnl]
                f_rears, f_fronts = panels.sp_panels[s][pnl]
                if t not in trunks:
                    trunks[t] = b.cable(
                        CableKind.SMF_OS2,
                        CableRole.TRUNK,
                        n_rears[rear],
                        f_rears[rear],
                        length=rng.randint(25, 60),
                        vendor=vendors["Corning"],
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
                sp = switches.spines[spi]
                sport = switches.spine_ports[id(sp)][spine_fill[spi]]
                spine_fill[spi] += 1
                front_n = n_fronts[rear * POSITIONS + pos]
                front_f = f_fronts[rear * POSITIONS + pos]
                j1 = b.cable(
                    CableKind.SMF_OS2,
                    CableRole.JUMPER,
                    (lp.cage, lp.connector),
                    front_n,
                    length=rng.choice([2, 3]),
                    vendor=vendors["Corning"],
                    install=d,
                    polarity=Polarity.A,
                    part="MTP12-APC-A",
                    **MPO_JUMPER,
                )
                j2 = b.cable(
                    CableKind.SMF_OS2,
                    CableRole.JUMPER,
                    front_f,
                    (sport.cage, sport.connector),
                    length=rng.choice([5, 8, 10]),
                    vendor=vendors["Corning"],
                    install=d,
                    polarity=Polarity.B,
                    part="MTP12-APC-B",
                    **MPO_JUMPER,
                )
                b.links.append((lp, sport, [j1, trunks[t], j2], "400GBASE-DR4"))
