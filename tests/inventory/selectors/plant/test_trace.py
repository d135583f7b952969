import pytest
from django.core.exceptions import ValidationError

from inventory.core.choices import CableKind, CableStatus, DeviceRole, Polarity
from inventory.models import Link
from inventory.selectors.plant.trace import port_trace
from inventory.services.plant import cables as cable_services
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_trace_through_two_panels_reaches_the_leaf_port():
    """
    [gpu-0001 eth1]--C-1--[pp-a Front 1 | Rear 1]==T-1==[Rear 1 | Front 1 pp-b]--C-2--[leaf-01 Ethernet2/1]
    C-1 type A, T-1 type B, C-2 type A: the channel arrives reversed, as parallel optics need.
    """
    rack_a, rack_b = f.RackFactory(name="A01"), f.RackFactory(name="B01")
    _, gpu = f.twin_port_device(
        "gpu-0001", rack=rack_a, u=10, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-01", rack=rack_b, u=46)
    _, pa_rear, pa_front = f.patch_panel("pp-a", rack=rack_a)
    _, pb_rear, pb_front = f.patch_panel("pp-b", rack=rack_b)
    f.jumper("C-1", gpu[1], pa_front[0], polarity=Polarity.A)
    f.trunk("T-1", pa_rear[0], pb_rear[0], polarity=Polarity.B)
    f.jumper("C-2", pb_front[0], leaf[2], polarity=Polarity.A)

    trace = port_trace(gpu[1])

    assert trace.complete
    assert trace.far_port_id == leaf[2].pk
    assert [s.label for s in trace.segments] == ["C-1", "T-1", "C-2"]
    assert str(trace.far) == "leaf-01:Ethernet2/1"
    assert trace.verdict.ok, trace.verdict.problems
    link = Link.objects.get(active=True, a_port__in=[gpu[1], leaf[2]])
    assert list(link.segments.values_list("cable__label", flat=True)) == ["C-1", "T-1", "C-2"]
    assert link.pmd == "400GBASE-DR4"
    # And from the other end, the same path backwards.
    back = port_trace(leaf[2])
    assert back.far_port_id == gpu[1].pk
    assert [s.label for s in back.segments] == ["C-2", "T-1", "C-1"]


def test_trace_uses_the_same_trunk_position_on_both_panels():
    """Front 3 on pp-a is rear position 3; the trunk delivers it to position 3 = Front 3 on pp-b.

    [gpu eth0]--J1--[pp-a F1]==T==[pp-b F1]--J2--[leaf E1/1]
    [gpu eth2]--J3--[pp-a F3]==T==[pp-b F3]--J4--[leaf E1/2]
    """
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    _, pa_rear, pa_front = f.patch_panel("pp-a")
    _, pb_rear, pb_front = f.patch_panel("pp-b", u=41)
    f.trunk("T", pa_rear[0], pb_rear[0])
    f.jumper("J1", gpu[0], pa_front[0], polarity=Polarity.A)
    f.jumper("J2", pb_front[0], leaf[0], polarity=Polarity.A)
    f.jumper("J3", gpu[2], pa_front[2], polarity=Polarity.A)
    f.jumper("J4", pb_front[2], leaf[1], polarity=Polarity.A)

    assert port_trace(gpu[0]).far_port_id == leaf[0].pk
    assert port_trace(gpu[2]).far_port_id == leaf[1].pk
    assert Link.objects.filter(active=True).count() == 2


def test_breakout_legs_reach_each_logical_port():
    """An 800G OSFP split into 2x400G at the cable:

    [leaf Ethernet1/1 + Ethernet1/2 (cage OSFP1, connector 1)]--BO-1 leg 1--[gpu-a eth0]
                                                               \\-BO-1 leg 2--[gpu-b eth0]
    """
    _, leaf = f.twin_port_device("leaf-bo", with_modules=False, cages=1)
    # Both logical ports of the cage exit through connector 1 for a breakout DAC.
    for p in leaf:
        p.connector = 1
        p.save()
    _, gpu_a = f.twin_port_device(
        "gpu-a", role=DeviceRole.GPU_NODE, with_modules=False, cages=1, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, gpu_b = f.twin_port_device(
        "gpu-b", role=DeviceRole.GPU_NODE, with_modules=False, cages=1, names=lambda c, k: f"eth{2 * c + k}"
    )
    cable, _ = cable_services.cable_install(
        label="BO-1",
        kind=CableKind.DAC,
        a=cable_services.EndSpec(port=leaf[0]),
        b=[cable_services.EndSpec(port=gpu_a[0]), cable_services.EndSpec(port=gpu_b[0])],
        length_m=2,
    )
    assert [e.label for e in cable.ends.filter(side="B").order_by("leg")] == ["BO-1-1", "BO-1-2"]
    assert port_trace(leaf[0]).far_port_id == gpu_a[0].pk
    assert port_trace(leaf[1]).far_port_id == gpu_b[0].pk
    assert port_trace(gpu_b[0]).far_port_id == leaf[1].pk


def test_polarity_pinning_and_polish_problems_are_named():
    """[gpu eth0]--J (type A, straight)--[leaf E1/1]: Tx meets Tx. A UPC plug on an APC module too."""
    _, gpu = f.twin_port_device("gpu-p", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-p", u=10)
    cable_services.cable_install(
        label="J-BAD",
        kind=CableKind.SMF_OS2,
        polarity=Polarity.A,
        a=f.mpo_end(gpu[0]),
        b=[f.mpo_end(leaf[0], pinned=True)],
    )
    trace = port_trace(gpu[0])
    assert not trace.verdict.ok
    text = " | ".join(trace.verdict.problems)
    assert "pinned to pinned" in text
    assert "straight end to end" in text
    link = Link.objects.get(active=True, a_port__in=[gpu[0], leaf[0]])
    assert link.path_ok is False and link.path_problems


def test_apc_module_refuses_a_upc_plug_and_writes_nothing():
    _, gpu = f.twin_port_device("gpu-u", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-u", u=10)
    with pytest.raises(ValidationError) as err:
        cable_services.cable_install(
            label="J-UPC", kind=CableKind.SMF_OS2, a=f.mpo_end(gpu[0], polish="UPC"), b=[f.mpo_end(leaf[0])]
        )
    assert "APC" in str(err.value)
    assert not cable_services.Cable.objects.filter(label="J-UPC").exists()


def test_retire_frees_the_port_and_ends_the_link_but_keeps_the_record():
    _, gpu = f.twin_port_device("gpu-r", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-r", u=10)
    cable = f.jumper("J-R", gpu[0], leaf[0])
    assert Link.objects.filter(active=True).count() == 1
    cable_services.cable_retire(cable=cable, reason="damaged")
    cable.refresh_from_db()
    assert cable.status == CableStatus.RETIRED and cable.retired_at
    assert Link.objects.filter(active=True).count() == 0
    assert not port_trace(gpu[0]).segments
    f.jumper("J-R2", gpu[0], leaf[0])  # the port is free again
    assert port_trace(gpu[0]).far_port_id == leaf[0].pk


def test_replace_retires_the_old_cable_and_links_the_new_one():
    _, gpu = f.twin_port_device("gpu-x", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-x", u=10)
    old = f.jumper("J-OLD", gpu[0], leaf[0])
    new = cable_services.cable_replace(old=old, new_label="J-NEW", reason="bent")
    old.refresh_from_db()
    assert old.replaced_by == new and old.status == CableStatus.RETIRED
    assert [s.label for s in port_trace(gpu[0]).segments] == ["J-NEW"]
