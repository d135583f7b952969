"""``transceivers_install_new``: many modules recorded straight into their cages at once (the
reconciliation's write), under the same rules as recording and installing one, all or nothing.

    leaf-n: OSFP1, OSFP2, OSFP3 (empty), OSFP4 (holds MT-OLD); [OSFP3]==DAC-1==[leaf-m OSFP1]
"""

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from inventory.core.choices import CableKind, FormFactor, TransceiverStatus
from inventory.models import Cage, Transceiver, TransceiverPlacement
from inventory.selectors.plant.history import history_for
from inventory.services.plant import cables as cable_services
from inventory.services.plant import transceivers as svc
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def cages():
    _, ports = f.twin_port_device("leaf-n", cages=4, with_modules=False)
    _, other = f.twin_port_device("leaf-m", cages=1, with_modules=False)
    cs = {c.name: c for c in Cage.objects.filter(device__name="leaf-n")}
    svc.transceiver_install(transceiver=f.module(serial="MT-OLD"), cage=cs["OSFP4"])
    cable_services.cable_install(
        label="DAC-1",
        kind=CableKind.DAC,
        a=cable_services.EndSpec(port=ports[4]),
        b=[cable_services.EndSpec(port=other[0])],
        length_m=2,
    )
    return cs


def test_modules_are_created_installed_with_placements_and_history(cages, user_with_role):
    eng = user_with_role("engineer")
    model = f.twin_dr4_model()
    now = timezone.now()
    made = svc.transceivers_install_new(
        rows=[(cages["OSFP1"], model, " SN-A "), (cages["OSFP2"], model, "SN-B")],
        actor=eng,
        reason="recorded from telemetry (reconciliation)",
        now=now,
    )
    assert [(x.serial, x.cage_id, x.status) for x in made] == [
        ("SN-A", cages["OSFP1"].pk, TransceiverStatus.INSTALLED),
        ("SN-B", cages["OSFP2"].pk, TransceiverStatus.INSTALLED),
    ]
    a = Transceiver.objects.get(serial="SN-A")
    assert a.cage.name == "OSFP1" and a.created_at == now
    p = TransceiverPlacement.objects.get(transceiver=a)
    assert (p.installed_at, p.installed_by, p.removed_at) == (now, eng, None)
    entry = history_for(a)[0]
    assert entry["who"] == "engineer-user" and "reconciliation" in entry["reason"]


@pytest.mark.parametrize(
    ("cage", "serial", "message"),
    [
        ("OSFP4", "SN-X", "leaf-n OSFP4 already holds module MT-OLD."),
        ("OSFP3", "SN-X", "leaf-n OSFP3 is occupied by a DAC/ACC/AOC plug."),
        ("OSFP2", "mt-old", "Serial mt-old is already recorded for NVIDIA."),
        ("OSFP2", "  ", "A module needs its serial number."),
    ],
)
def test_a_broken_rule_refuses_the_whole_batch(cages, cage, serial, message):
    model = f.twin_dr4_model()
    with pytest.raises(ValidationError) as exc:
        svc.transceivers_install_new(
            rows=[(cages["OSFP1"], model, "SN-OK"), (cages[cage], model, serial)], reason="test"
        )
    assert exc.value.message_dict == {f"cage:{cages[cage].pk}": [message]}
    assert not Transceiver.objects.filter(serial="SN-OK").exists()


def test_a_module_of_another_form_factor_and_a_serial_twice_in_one_batch_are_refused(cages):
    qsfp = f.twin_dr4_model(part="QSFP-DD-DR4", form_factor=FormFactor.QSFP_DD)
    model = f.twin_dr4_model()
    with pytest.raises(ValidationError) as exc:
        svc.transceivers_install_new(
            rows=[(cages["OSFP1"], qsfp, "SN-Q"), (cages["OSFP2"], model, "SN-D")], reason="test"
        )
    assert exc.value.message_dict == {
        f"cage:{cages['OSFP1'].pk}": [f"A {FormFactor.QSFP_DD} module does not fit a {FormFactor.OSFP} cage."]
    }
    with pytest.raises(ValidationError) as exc:
        svc.transceivers_install_new(
            rows=[(cages["OSFP1"], model, "SN-D"), (cages["OSFP2"], model, "sn-d")], reason="test"
        )
    assert exc.value.message_dict == {
        f"cage:{cages['OSFP2'].pk}": ["Serial sn-d is already recorded for NVIDIA."]
    }
    assert not Transceiver.objects.filter(serial__iexact="SN-D").exists()
