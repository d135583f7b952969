"""Wiring validation: bring-up report per rack, the rail rule, and expected-topology exports.

* Bring-up report: every interface port of the rack's devices with its recorded far end and
  the neighbour telemetry last saw (LLDP / IB fabric): ok, miswired (expected vs seen), no
  neighbour seen, or not recorded. Plus the rail rule: NIC i of a GPU node must reach the
  rail-i leaf.
* Exports of the recorded plant: a plain port-to-port list, the UFM Cable Validation Tool
  ``.topo`` file (InfiniBand / NVOS, ibdiagnet style) and its ``.dot`` file (Ethernet).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime

from django.db.models import Q

from inventory.core.choices import DeviceRole, PortKind
from inventory.models import Device, Link, LinkSegment, Port, PortAlias, Rack
from inventory.selectors.plant.ports import latest_identity

RAIL_IN_NAME = re.compile(r"(?:rail|-r)(\d+)$", re.IGNORECASE)
TRAILING_NUMBER = re.compile(r"(\d+)$")
# Compute-fabric NIC names on a GPU node (``eth3``, ``ib3``, ``mlx5_3``, ``nic3``); front-end
# (``fe0``), BMC and other ports are not on a rail.
NIC_NAME = re.compile(r"^(?:eth|ib|mlx5_|nic|rail)(\d+)$", re.IGNORECASE)
SWITCH_ROLES = {DeviceRole.LEAF, DeviceRole.SPINE, DeviceRole.MGMT_SWITCH}


def _links_for(q: Q) -> list[Link]:
    return list(
        Link.objects.filter(active=True)
        .filter(q)
        .select_related("a_port__device__rack", "b_port__device__rack")
        .order_by("a_port__device__name", "a_port__name")
    )


def _far(link: Link, port_id: int) -> Port:
    return link.b_port if link.a_port_id == port_id else link.a_port


def nic_index(port: Port) -> int | None:
    """NIC number of a GPU node's compute port (``eth3`` -> 3), None for others."""
    m = NIC_NAME.match(port.name)
    return int(m.group(1)) if m else None


def leaf_rail(device: Device) -> int | None:
    """Rail a leaf serves when its name says so (``leaf-s01-r3`` -> rail index 2)."""
    m = RAIL_IN_NAME.search(device.name)
    return int(m.group(1)) - 1 if m else None


def rail_violations(node_ports: list[tuple[Port, Port | None]]) -> list[dict]:
    """The rail rule over (GPU node compute port, leaf port it reaches) pairs.

    The rail-i leaf is the one its name numbers (``-r<i+1>``/``rail<i+1>``); when names do not
    say, it is the leaf most nodes' NIC i reach. A NIC reaching another leaf breaks the rule.
    """
    by_index: dict[int, Counter] = {}
    for port, far in node_ports:
        i = nic_index(port)
        if i is None or far is None or far.device.role != DeviceRole.LEAF:
            continue
        by_index.setdefault(i, Counter())[far.device.name] += 1
    expected: dict[int, str] = {}
    for i, counts in by_index.items():
        named = [n for n in counts if leaf_rail(Device(name=n)) == i]
        expected[i] = named[0] if named else counts.most_common(1)[0][0]
    out = []
    for port, far in node_ports:
        i = nic_index(port)
        if i is None or far is None or far.device.role != DeviceRole.LEAF:
            continue
        rail = leaf_rail(far.device)
        ok = (rail == i) if rail is not None else far.device.name == expected.get(i)
        if not ok:
            out.append(
                {
                    "port": f"{port.device.name}:{port.name}",
                    "nic": i,
                    "reaches": f"{far.device.name}:{far.name}",
                    "expected_leaf": expected.get(i) if rail is None else f"the rail-{i + 1} leaf",
                }
            )
    return out


def bringup_report(*, rack: Rack, now: datetime) -> dict:
    """Every miswire, every port with no neighbour seen, and the rail rule, for one rack."""
    ports = list(
        Port.objects.filter(device__rack=rack, kind=PortKind.INTERFACE, retired_at__isnull=True)
        .select_related("device")
        .order_by("device__position_u", "device__name", "name")
    )
    ids = [p.pk for p in ports]
    links = _links_for(Q(a_port_id__in=ids) | Q(b_port_id__in=ids))
    link_of = {}
    for lk in links:
        link_of[lk.a_port_id] = lk
        link_of[lk.b_port_id] = lk
    seen = latest_identity(port_ids=ids)
    # Resolve what was seen to ports (names or aliases), one query.
    pairs = {
        (s["neighbor_device"], s.get("neighbor_port") or "")
        for s in seen.values()
        if s.get("neighbor_device")
    }
    resolved = {}
    if pairs:
        for dev, name, pid in PortAlias.objects.filter(
            device__name__in={d for d, _ in pairs}, name__in={n for _, n in pairs}, valid_to__isnull=True
        ).values_list("device__name", "name", "port_id"):
            resolved[(dev, name)] = pid
    rows, miswired, no_neighbour, unrecorded = [], [], [], []
    node_ports_recorded, node_ports_seen = [], []
    seen_ports = {
        p.pk: p for p in Port.objects.filter(pk__in=set(resolved.values())).select_related("device")
    }
    for p in ports:
        lk = link_of.get(p.pk)
        far = _far(lk, p.pk) if lk else None
        s = seen.get(p.pk) or {}
        seen_label = (
            f"{s['neighbor_device']}:{s.get('neighbor_port') or '?'}" if s.get("neighbor_device") else None
        )
        seen_id = (
            resolved.get((s.get("neighbor_device"), s.get("neighbor_port") or "")) if seen_label else None
        )
        if far is None and seen_label is None:
            status = "unused"
        elif far is None:
            status = "unrecorded"
            unrecorded.append({"port": f"{p.device.name}:{p.name}", "seen": seen_label})
        elif seen_label is None:
            status = "no_neighbour"
            no_neighbour.append(
                {"port": f"{p.device.name}:{p.name}", "expected": f"{far.device.name}:{far.name}"}
            )
        elif seen_id == far.pk:
            status = "ok"
        else:
            status = "miswire"
            miswired.append(
                {
                    "port": f"{p.device.name}:{p.name}",
                    "expected": f"{far.device.name}:{far.name}",
                    "seen": seen_label,
                }
            )
        rows.append(
            {
                "port": p,
                "expected": f"{far.device.name}:{far.name}" if far else None,
                "seen": seen_label,
                "status": status,
                "seen_at": s.get("ts"),
            }
        )
        if p.device.role == DeviceRole.GPU_NODE:
            node_ports_recorded.append((p, far))
            if seen_id in seen_ports:
                node_ports_seen.append((p, seen_ports[seen_id]))
    return {
        "rack": rack,
        "rows": rows,
        "miswired": miswired,
        "no_neighbour": no_neighbour,
        "unrecorded": unrecorded,
        "rail_recorded": rail_violations(node_ports_recorded),
        "rail_seen": rail_violations(node_ports_seen),
        "generated_at": now,
    }


def _site_q(site: str | None, prefix: str) -> Q:
    if not site:
        return Q()
    return Q(**{f"{prefix}__device__rack__row__room__site__slug": site}) | Q(
        **{f"{prefix}__device__rack__row__room__site__name": site}
    )


def topology_links(*, site: str | None = None) -> list[tuple[Link, list[str]]]:
    """Active links between interface ports, with their cable labels in path order."""
    links = _links_for(_site_q(site, "a_port") if site else Q())
    labels: dict[int, list[str]] = {}
    for lid, label in (
        LinkSegment.objects.filter(link__active=True)
        .order_by("link_id", "seq")
        .values_list("link_id", "cable__label")
    ):
        labels.setdefault(lid, []).append(label)
    return [(lk, labels.get(lk.pk, [])) for lk in links]


def topology_port_list(*, site: str | None = None) -> str:
    """``device port device port cables`` per line, switches first: a diff-able plain list."""
    lines = ["# cabletrack expected topology: a_device a_port b_device b_port cables"]
    for lk, labels in topology_links(site=site):
        a, b = lk.a_port, lk.b_port
        if b.device.role in SWITCH_ROLES and a.device.role not in SWITCH_ROLES:
            a, b = b, a
        lines.append(f"{a.device.name} {a.name} {b.device.name} {b.name} {','.join(labels) or '-'}")
    return "\n".join(lines) + "\n"


def _topo_port(p: Port, aliases: dict[int, str]) -> str:
    if p.device.role == DeviceRole.GPU_NODE or p.device.role == DeviceRole.STORAGE:
        return f"{aliases.get(p.pk, p.name)}/P1"
    m = TRAILING_NUMBER.search(p.name.replace("/", ""))
    if p.name.isdigit():
        return f"P{p.name}"
    return f"P{m.group(1)}" if m and p.name.startswith("P") else p.name


def _topo_type(d: Device) -> str:
    if d.role in (DeviceRole.GPU_NODE, DeviceRole.STORAGE):
        return "HCA"
    return (d.model or d.role).replace(" ", "_")


def topology_ufm(*, site: str | None = None) -> str:
    """The UFM Cable Validation Tool ``.topo`` file (ibdiagnet style), one block per switch::

        MQM9700 ib-leaf-01
        P1 -4x-100G-> HCA gpu-0001 mlx5_0/P1
        P33 -4x-100G-> MQM9700 ib-spine-01 P1

    Host ports use their ``mlx5_N`` alias (the RDMA device name), switch ports their name.
    """
    pairs = topology_links(site=site)
    port_ids = {p for lk, _ in pairs for p in (lk.a_port_id, lk.b_port_id)}
    aliases = dict(
        PortAlias.objects.filter(port_id__in=port_ids, source="mlx5", valid_to__isnull=True).values_list(
            "port_id", "name"
        )
    )
    blocks: dict[str, list[str]] = {}
    headers: dict[str, str] = {}
    for lk, _labels in pairs:
        for near, far in ((lk.a_port, lk.b_port), (lk.b_port, lk.a_port)):
            if near.device.role not in SWITCH_ROLES:
                continue
            width = lk.lanes or near.lane_count or 4
            lane = (lk.speed_gbps or near.speed_gbps or 0) // max(width, 1)
            headers[near.device.name] = f"{_topo_type(near.device)} {near.device.name}"
            blocks.setdefault(near.device.name, []).append(
                f"{_topo_port(near, aliases)} -{width}x-{lane}G-> {_topo_type(far.device)} {far.device.name} "
                f"{_topo_port(far, aliases)}"
            )
    out = []
    for name in sorted(blocks):
        out.append(headers[name])
        out.extend(blocks[name])
        out.append("")
    return "\n".join(out)


def topology_dot(*, site: str | None = None) -> str:
    """The UFM Cable Validation Tool ``.dot`` file for Ethernet fabrics."""
    pairs = topology_links(site=site)
    nodes: dict[str, str] = {}
    edges = []
    role_name = {DeviceRole.LEAF: "leaf", DeviceRole.SPINE: "spine", DeviceRole.MGMT_SWITCH: "leaf"}
    for lk, _ in pairs:
        a, b = lk.a_port, lk.b_port
        if b.device.role in SWITCH_ROLES and a.device.role not in SWITCH_ROLES:
            a, b = b, a
        for d in (a.device, b.device):
            if d.role in SWITCH_ROLES:
                nodes[d.name] = role_name.get(d.role, "leaf")
        edges.append(f'  "{a.device.name}":"{a.name}" -- "{b.device.name}":"{b.name}"')
    lines = ["graph network {"]
    lines += [f'  "{n}" [ label="{n}" role="{r}" ]' for n, r in sorted(nodes.items())]
    lines += edges
    lines.append("}")
    return "\n".join(lines) + "\n"
