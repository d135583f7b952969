"""Modules through the API: one serial per vendor, whatever its case, as on the desk.

Before, ``POST /api/transceivers/`` took ``mt-1`` beside a recorded ``MT-1`` of the same vendor
(the desk's form refused it), so the vendor had two modules the reconciliation and the swap
form (which find a module by serial in any case) could not tell apart; an exact repeat was
refused under ``non_field_errors`` ("The fields model, serial must make a unique set.").
"""

import pytest

from inventory.models import Transceiver
from tests import factories as f

pytestmark = pytest.mark.django_db

TAKEN = "Serial MT-1 is already recorded for NVIDIA MMS4X00-NM (spare (in stock))."


@pytest.mark.parametrize("serial", ["mt-1", "MT-1", " MT-1 "])
def test_a_serial_its_vendor_already_has_is_refused_at_serial(engineer_api, serial):
    model = f.twin_dr4_model()
    f.module(model, serial="MT-1")
    other = f.twin_dr4_model(part="MMA4Z00-NS")  # another model of the same vendor
    r = engineer_api.post("/api/transceivers/", {"model": other.pk, "serial": serial}, format="json")
    assert r.status_code == 400
    assert r.json()["serial"] == [TAKEN]
    assert Transceiver.objects.count() == 1


def test_an_edit_to_a_serial_its_vendor_already_has_is_refused_at_serial(engineer_api):
    model = f.twin_dr4_model()
    f.module(model, serial="MT-1")
    spare = f.module(model, serial="MT-2")
    r = engineer_api.patch(f"/api/transceivers/{spare.pk}/", {"serial": "Mt-1"}, format="json")
    assert r.status_code == 400
    assert r.json()["serial"] == [TAKEN]
    spare.refresh_from_db()
    assert spare.serial == "MT-2"
    ok = engineer_api.patch(
        f"/api/transceivers/{spare.pk}/", {"serial": "MT-2", "firmware": "1.1"}, format="json"
    )
    assert ok.status_code == 200, ok.json()
