"""An MPO end without a fibre count is refused where a new cable is described (the plan import,
its API twin, ``POST /api/cables/``), with the row, the column and what to write; a breakout's
legs, which carry a share of the one end's fibres, are accepted blank. Without the count, the
power-meter form asked for one fibre's loss on a 12-fibre jumper.

Plant (``conftest.plant``), the rows below in brackets::

    [gpu-0001 eth2]--(M-1, MPO both ends)--[leaf-01 Ethernet1/2]
    [gpu-0001 eth3]--(BO-1, MPO-12)--< leg 1 [pp-a Front 2], leg 2 [pp-a Front 3] (MPO, no count)
"""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from inventory.models import Cable, CableEnd
from inventory.services.plant import cables as cable_services
from tests import factories as f

pytestmark = pytest.mark.django_db

HEADER = "label,kind,a_device,a_port,b_device,b_port,polarity,length_m,a_connector,a_fibres,a_polish,b_connector,b_fibres,b_polish\n"
BREAKOUT = "BO-1,SMF_OS2,gpu-0001,eth3,pp-a,Front 2;Front 3,B,3,MPO,12,APC,MPO,,APC\n"
NO_COUNT = "M-1,SMF_OS2,gpu-0001,eth2,leaf-01,Ethernet1/2,B,3,MPO,,APC,MPO,12,APC\n"
MESSAGE = "MPO needs a fibre count: 8, 12, 16, 24 or 32. Write it in the a_fibres column."


def _upload(client, text: str):
    return client.post("/cables/import", {"file": SimpleUploadedFile("plan.csv", text.encode(), "text/csv")})


def test_the_desk_import_refuses_an_mpo_end_without_a_count_by_row_and_column(plant, engineer_client):
    html = _upload(engineer_client, HEADER + BREAKOUT + NO_COUNT).content.decode()
    assert "The plan has errors" in html and 'name="apply"' not in html
    rows = re.findall(
        r"<tr><td class=\"num\">(\d+)</td><td class=\"mono\">([^<]*)</td><td>(.*?)</td></tr>", html
    )
    # row 2, M-1, its a_fibres; the breakout in row 1 is not an error
    assert rows == [("2", "M-1", f'<p class="error">End A fibres: {MESSAGE}</p>')]
    assert not Cable.objects.filter(label__in=["M-1", "BO-1"]).exists()  # nothing applied

    # Written as the message says, the plan goes in, and the gate asks for the 8 fibres in use.
    html = _upload(
        engineer_client, HEADER + BREAKOUT + NO_COUNT.replace("MPO,,APC", "MPO,12,APC")
    ).content.decode()
    token = re.search(r'name="token" value="([0-9a-f]+)"', html).group(1)
    sha = re.search(r'name="sha256" value="([0-9a-f]+)"', html).group(1)
    engineer_client.post("/cables/import", {"apply": "1", "token": token, "sha256": sha})
    assert [e.fibre_count for e in CableEnd.objects.filter(cable__label="M-1")] == [12, 12]
    legs = CableEnd.objects.filter(cable__label="BO-1", side="B").order_by("leg")
    assert [(e.leg, e.connector_type, e.fibre_count) for e in legs] == [(1, "MPO", None), (2, "MPO", None)]
    form = engineer_client.get("/c/M-1/test/power-meter").content.decode()
    assert 'name="loss_8"' in form and 'name="loss_9"' not in form


def test_a_recorded_cable_read_back_from_an_older_export_is_not_refused(plant, engineer_api):
    """A plan changes no end: a recorded cable whose MPO end has no count (recorded before this
    rule) imports back unchanged, so an export of the plant still round-trips."""
    cable_services.cable_install(
        label="L-1",
        kind="SMF_OS2",
        a=f.mpo_end(plant["gpu"][2], fibre_count=None),
        b=[f.mpo_end(plant["leaf"][1], fibre_count=None)],
    )
    exported = engineer_api.get("/api/cables/export/?as=csv").content.decode()
    assert ",MPO,," in exported
    again = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", exported, content_type="text/csv")
    assert again.status_code == 200 and again.json()["summary"]["error"] == 0, again.json()


def test_the_api_plan_import_says_the_same(plant, engineer_api):
    r = engineer_api.generic(
        "POST", "/api/cables/import/?dry_run=0", HEADER + BREAKOUT + NO_COUNT, content_type="text/csv"
    )
    assert r.status_code == 400
    rows = {row["label"]: row for row in r.json()["rows"]}
    assert rows["M-1"]["row"] == 2 and rows["M-1"]["errors"] == {"a_fibres": MESSAGE}
    assert rows["BO-1"]["errors"] == {}
    assert not Cable.objects.filter(label__in=["M-1", "BO-1"]).exists()


def _end(device, port, **kw):
    return {"device": device, "port_name": port, "connector_type": "MPO", "polish": "APC", **kw}


def test_the_api_create_refuses_it_at_the_end_and_accepts_a_breakouts_legs(plant, engineer_api):
    body = {
        "label": "M-1",
        "kind": "SMF_OS2",
        "a": _end("gpu-0001", "eth2", fibre_count=12),
        "b": [_end("leaf-01", "Ethernet1/2")],
    }
    r = engineer_api.post("/api/cables/", body, format="json")
    assert r.status_code == 400
    assert r.json()["b"] == {"0": {"fibre_count": ["MPO needs a fibre count: 8, 12, 16, 24 or 32."]}}
    body["a"].pop("fibre_count")
    body["b"][0]["fibre_count"] = 12
    r = engineer_api.post("/api/cables/", body, format="json")
    assert r.status_code == 400
    assert r.json()["a"] == {"fibre_count": ["MPO needs a fibre count: 8, 12, 16, 24 or 32."]}
    assert "b" not in r.json()
    assert not Cable.objects.filter(label="M-1").exists()

    breakout = {
        "label": "BO-1",
        "kind": "SMF_OS2",
        "a": _end("gpu-0001", "eth3", fibre_count=12),
        "b": [_end("pp-a", "Front 2"), _end("pp-a", "Front 3")],
    }
    r = engineer_api.post("/api/cables/", breakout, format="json")
    assert r.status_code == 201, r.json()
    assert r.json()["role"] == "breakout"


def test_a_count_mpo_plugs_are_not_made_in_is_refused_too(plant, engineer_api):
    """A typed 10 for a 12-fibre jumper: the power-meter form would ask for 10 fibres."""
    # between two panels' front ports: no module there to say which MPO it takes
    ten = "M-1,SMF_OS2,pp-a,Front 4,pp-b,Front 4,B,3,MPO,10,APC,MPO,12,APC\n"
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", HEADER + ten, content_type="text/csv")
    rows = {row["label"]: row for row in r.json()["rows"]}
    assert rows["M-1"]["errors"] == {
        "a_fibres": "An MPO plug has 8, 12, 16, 24 or 32 fibres, not 10. Write it in the a_fibres column."
    }
    body = {
        "label": "M-1",
        "kind": "SMF_OS2",
        "a": _end("pp-a", "Front 4", fibre_count=10),
        "b": [_end("pp-b", "Front 4", fibre_count=12)],
    }
    r = engineer_api.post("/api/cables/", body, format="json")
    assert r.status_code == 400
    assert r.json()["a"] == {"fibre_count": ["An MPO plug has 8, 12, 16, 24 or 32 fibres, not 10."]}
    assert not Cable.objects.filter(label="M-1").exists()
