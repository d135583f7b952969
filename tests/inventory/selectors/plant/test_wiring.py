"""Wiring validation on the demo cluster (rail-optimised: NIC ethK of every node goes to the
SU's rail-K leaf ``leaf-s01-r<K+1>``), and the UFM exports.

    [gpu-0001 eth0]--jumper--[leaf-s01-r1 Ethernet1/1]
    [gpu-0001 eth1]--jumper--[leaf-s01-r2 Ethernet1/1]   ... eth7 -> leaf-s01-r8
"""

from datetime import date

import pytest
from django.utils import timezone

from inventory.models import Port, Rack
from inventory.selectors.plant import wiring
from inventory.services.demo.seed import demo_seed
from tests import factories as f
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db


_demo = seeded_module(lambda: demo_seed(gpus=32, seed=7, as_of=date(2026, 11, 1)))


@pytest.fixture
def demo(_demo):
    return Rack.objects.get(name="S01-G01")


def test_the_recorded_demo_cabling_keeps_the_rail_rule(demo):
    report = wiring.bringup_report(rack=demo, now=timezone.now())
    assert report["rail_recorded"] == []
    assert report["miswired"] == []
    # nothing reported yet: every cabled compute port is listed as having no neighbour
    assert {"port": "gpu-0001:eth3", "expected": "leaf-s01-r4:Ethernet1/1"} in report["no_neighbour"]


def test_a_nic_seen_on_another_rails_leaf_breaks_the_rail_rule_and_is_a_miswire(demo):
    now = timezone.now()
    eth0 = Port.objects.get(device__name="gpu-0001", name="eth0")
    eth1 = Port.objects.get(device__name="gpu-0001", name="eth1")
    r1 = Port.objects.get(device__name="leaf-s01-r1", name="Ethernet1/1")
    r2 = Port.objects.get(device__name="leaf-s01-r2", name="Ethernet1/1")
    f.seen(eth0, now, neighbor=r2)  # the two jumpers were swapped at the node
    f.seen(eth1, now, neighbor=r1)
    report = wiring.bringup_report(rack=demo, now=now)
    assert {m["port"] for m in report["miswired"]} == {"gpu-0001:eth0", "gpu-0001:eth1"}
    assert {
        "port": "gpu-0001:eth0",
        "expected": "leaf-s01-r1:Ethernet1/1",
        "seen": "leaf-s01-r2:Ethernet1/1",
    } in report["miswired"]
    broken = {(r["port"], r["reaches"]) for r in report["rail_seen"]}
    assert broken == {
        ("gpu-0001:eth0", "leaf-s01-r2:Ethernet1/1"),
        ("gpu-0001:eth1", "leaf-s01-r1:Ethernet1/1"),
    }


def test_the_ufm_topo_names_hosts_by_their_rdma_device(demo):
    topo = wiring.topology_ufm()
    block = topo.split("\n\n")
    leaf1 = next(b for b in block if b.startswith("7060DX5-64S leaf-s01-r1"))
    # gpu-0001's eth0 is mlx5_0 in the demo's DGX-like naming (eth1 -> mlx5_3)
    assert "Ethernet1/1 -4x-100G-> HCA gpu-0001 mlx5_0/P1" in leaf1
    assert "HCA gpu-0001 mlx5_3/P1" in next(b for b in block if b.startswith("7060DX5-64S leaf-s01-r2"))
    plain = wiring.topology_port_list()
    assert "leaf-s01-r1 Ethernet1/1 gpu-0001 eth0 C" in plain
