from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from inventory.core.choices import CableStatus, DeviceRole
from inventory.models import Cable, Port, UntrackedWriteError
from inventory.selectors.plant.history import history_for
from inventory.selectors.plant.ports import ports_resolve
from inventory.services.plant import cables as cable_services
from inventory.services.plant import ports as port_services
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_every_collector_name_resolves_to_the_port():
    _, gpu = f.twin_port_device("gpu-a", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    port_services.port_alias_add(port=gpu[3], name="mlx5_5", source="mlx5")
    port_services.port_alias_add(port=gpu[3], name="ibp94s0", source="ib")
    port_services.port_alias_add(port=gpu[3], name="0x1070fd0300a1b2c3/1", source="ib-guid")
    got = ports_resolve(
        [
            ("gpu-a", "eth3"),
            ("gpu-a", "mlx5_5"),
            ("gpu-a", "ibp94s0"),
            ("gpu-a", "0x1070fd0300a1b2c3/1"),
            ("gpu-a", "eth99"),
            ("nope", "eth3"),
        ]
    )
    assert got == {("gpu-a", n): gpu[3].pk for n in ("eth3", "mlx5_5", "ibp94s0", "0x1070fd0300a1b2c3/1")}


def test_an_alias_is_unique_per_device_at_any_time_and_old_names_stay_dated():
    _, sw = f.twin_port_device("leaf-a")
    with pytest.raises(ValidationError, match="already names"):
        port_services.port_alias_add(port=sw[1], name="Ethernet1/1")
    before = timezone.now()
    later = before + timedelta(hours=1)
    port_services.port_rename(port=sw[0], new_name="Ethernet1/1/1", now=later)
    now_names = ports_resolve([("leaf-a", "Ethernet1/1"), ("leaf-a", "Ethernet1/1/1")])
    assert now_names == {("leaf-a", "Ethernet1/1/1"): sw[0].pk}
    then = ports_resolve([("leaf-a", "Ethernet1/1")], at=before + timedelta(minutes=1))
    assert then == {("leaf-a", "Ethernet1/1"): sw[0].pk}
    # The freed name can go to another port now (a breakout change renames ports).
    port_services.port_alias_add(port=sw[1], name="Ethernet1/1", now=later + timedelta(minutes=1))


def test_history_records_create_change_and_retire_with_who_and_before_after(user_with_role):
    from simple_history.utils import update_change_reason  # noqa: F401 - the library we rely on

    _, gpu = f.twin_port_device("gpu-h", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-h", u=9)
    cable = f.jumper("H-1", gpu[0], leaf[0])
    cable_services.cable_set_status(cable=cable, status=CableStatus.DEGRADED, reason="fec rising")
    cable_services.cable_retire(cable=cable, reason="replaced")
    entries = history_for(Cable.objects.get(label="H-1"))
    kinds = [e["what"] for e in entries if e["subject"] == "cable H-1"]
    assert kinds == ["changed", "changed", "created"]
    status_changes = [c for e in entries for c in e["changes"] if c["field"] == "status"]
    assert {"field": "status", "old": "planned", "new": "degraded"} in status_changes
    assert {"field": "status", "old": "degraded", "new": "retired"} in status_changes
    assert any(
        e["subject"] == "cable H-1 end" and any(c["field"] == "active" for c in e["changes"]) for e in entries
    )


def test_mass_updates_that_would_skip_history_are_refused():
    _, gpu = f.twin_port_device("gpu-m", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    with pytest.raises(UntrackedWriteError):
        Port.objects.filter(device__name="gpu-m").update(speed_gbps=200)
    with pytest.raises(UntrackedWriteError):
        Cable.objects.all().delete()
