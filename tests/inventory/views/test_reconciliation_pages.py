"""The reconciliation desk page: the report per rack, and ticking rows -> preview -> confirm.

Same plant as the API tests (``tests/inventory/api/test_reconciliation_api.py``)::

    [leaf-01 OSFP1: nothing recorded, s/n LEAF-SN-1 seen]   missing record (creatable)
    [gpu-0001 OSFP2: B recorded, SWAPPED-IN-1 seen]         swap
    [gpu-0001 eth0]--J-1--[leaf-01 Ethernet1/1]; eth0 sees leaf-01:Ethernet1/2 -> miswire
"""

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from inventory.models import Cage, Transceiver
from tests.inventory.api.test_reconciliation_api import identity
from tests.inventory.api.test_reconciliation_api import recon as recon  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db


def _client(user_with_role, role):
    c = Client()
    c.force_login(user_with_role(role))
    return c


def test_the_page_shows_each_kind_of_difference_per_rack(recon, user_with_role):  # noqa: F811
    html = _client(user_with_role, "engineer").get("/reconciliation/?rack=REC-1").content.decode()
    assert "Rack REC-1" in html
    assert "LEAF-SN-1" in html and "no record" in html
    assert "SWAPPED-IN-1" in html and "swap" in html
    assert "sees none" in html
    assert "No module model ACME FOO-1" in html
    assert "miswired" in html and "leaf-01:Ethernet1/2" in html and "J-1" in html
    osfp1 = Cage.objects.get(device__name="leaf-01", name="OSFP1")
    assert f'name="key" value="cage:{osfp1.pk}"' in html
    assert html.count('name="key"') == 1  # only creatable rows can be ticked
    assert "Preview all missing records of rack REC-1 (1)" in html
    # reachable from the module list and the rack's bring-up report
    assert "/reconciliation/" in _client(user_with_role, "engineer").get("/transceivers/").content.decode()


def test_tick_preview_confirm_creates_the_module_once(recon, user_with_role):  # noqa: F811
    eng = _client(user_with_role, "engineer")
    osfp1 = Cage.objects.get(device__name="leaf-01", name="OSFP1")
    page = eng.post("/reconciliation/preview", {"key": [f"cage:{osfp1.pk}"], "rack": "REC-1"})
    html = page.content.decode()
    assert page.status_code == 200 and "1 module record to create" in html and "LEAF-SN-1" in html
    assert (
        "NVIDIA MMS4X00-NM (400GBASE-DR4)" in html
    )  # the model the record will use, not the EEPROM's spelling
    assert not Transceiver.objects.filter(serial="LEAF-SN-1").exists()
    token = page.context["preview"].token
    done = eng.post("/reconciliation/apply", {"token": token, "rack": "REC-1"})
    assert done.status_code == 302 and done["Location"] == "/reconciliation/?rack=REC-1"
    msgs = [str(m) for m in get_messages(done.wsgi_request)]
    assert msgs == ["1 module record(s) created and installed in their cages."]
    x = Transceiver.objects.get(serial="LEAF-SN-1")
    assert x.cage_id == osfp1.pk and x.history.get().history_user.username == "engineer-user"
    # The module's own page shows who recorded it.
    assert "engineer-user" in eng.get(f"/t/{x.pk}").content.decode()
    # A double submit creates nothing more and says so.
    again = eng.post("/reconciliation/apply", {"token": token, "rack": "REC-1"}, follow=True)
    assert "Nothing new: the 1 module(s) were already recorded." in again.content.decode()
    assert Transceiver.objects.filter(serial="LEAF-SN-1").count() == 1


def test_a_row_that_changed_since_the_preview_is_refused_with_the_reason(recon, user_with_role):  # noqa: F811
    eng = _client(user_with_role, "engineer")
    page = eng.post("/reconciliation/preview", {"all": "1", "rack": "REC-1"})
    leaf = recon["leaf"]
    for p in leaf[0:2]:
        identity(p, vendor="NVIDIA", part="MMS4X00-NM", serial="LEAF-SN-2")
    stale = eng.post("/reconciliation/apply", {"token": page.context["preview"].token, "rack": "REC-1"})
    html = stale.content.decode()
    assert stale.status_code == 409
    assert "Nothing was created" in html
    assert "leaf-01 OSFP1: telemetry now reports s/n LEAF-SN-2 (s/n LEAF-SN-1 at the preview)." in html
    assert not Transceiver.objects.filter(serial__startswith="LEAF-SN").exists()


@pytest.mark.parametrize("role", ["viewer", "technician"])
def test_viewers_and_technicians_see_the_report_but_cannot_create(recon, user_with_role, role):  # noqa: F811
    c = _client(user_with_role, role)
    html = c.get("/reconciliation/?rack=REC-1").content.decode()
    assert "LEAF-SN-1" in html and 'name="key"' not in html and "Preview" not in html
    osfp1 = Cage.objects.get(device__name="leaf-01", name="OSFP1")
    assert c.post("/reconciliation/preview", {"key": [f"cage:{osfp1.pk}"]}).status_code == 403
    eng_page = _client(user_with_role, "engineer").post(
        "/reconciliation/preview", {"all": "1", "rack": "REC-1"}
    )
    assert c.post("/reconciliation/apply", {"token": eng_page.context["preview"].token}).status_code == 403
    assert not Transceiver.objects.filter(serial="LEAF-SN-1").exists()


def test_a_large_report_is_capped_on_the_page_but_preview_all_takes_everything(
    recon, user_with_role, monkeypatch
):  # noqa: F811
    from inventory.views import reconciliation as views
    from tests import factories as f

    monkeypatch.setattr(views, "PAGE_ROWS", 3)
    rack = f.RackFactory(name="REC-1")
    _, spine = f.twin_port_device("spine-09", rack=rack, u=30, cages=3, with_modules=False)
    for i, p in enumerate(spine[::2]):
        identity(p, vendor="NVIDIA", part="MMS4X00-NM", serial=f"SP9-{i}")
    eng = _client(user_with_role, "engineer")
    html = eng.get("/reconciliation/?rack=REC-1").content.decode()
    assert "more rows not shown" in html
    page = eng.post("/reconciliation/preview", {"all": "1", "rack": "REC-1"})
    assert "4 module records to create" in page.content.decode()  # leaf-01 OSFP1 + spine-09's three


def test_an_unknown_rack_is_named_on_the_page(recon, user_with_role):  # noqa: F811
    html = _client(user_with_role, "viewer").get("/reconciliation/?rack=NOPE").content.decode()
    assert "No rack &#x27;NOPE&#x27;." in html and "LEAF-SN-1" not in html
