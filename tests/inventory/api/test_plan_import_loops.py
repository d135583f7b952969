"""A cable whose path through patch panels would come back to where it started (a loop) is
refused, by the plan import (the row, the cable and the loop named; nothing of the plan written)
and by the single-cable install the API and the desk form use, through the same check.

    [gpu-1 eth0]--J-1--[pp-a Front 1]           [pp-b Front 1]--J-2--[leaf-1 Ethernet1/1]
                       [pp-a Rear 1]==T-1==[pp-b Rear 1]
    L-1 (the plan): [pp-b Front 2]--L-1--[pp-a Front 2]: pp-a Front 2 -> Rear 1 position 2
    -> T-1 -> pp-b Rear 1 position 2 -> pp-b Front 2 -> L-1 again.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.core.choices import DeviceRole
from inventory.models import Cable, CableEnd, Link
from inventory.selectors.plant.trace import port_trace
from inventory.services.plans.cable_plan import cable_plan_import
from tests import factories as f

pytestmark = pytest.mark.django_db

HEADER = "label,kind,a_device,a_port,b_device,b_port,role,a_connector,a_fibres,b_connector,b_fibres\n"
GOOD = "P-1,SMF_OS2,gpu-1,eth1,leaf-1,Ethernet1/2,,MPO,12,MPO,12\n"
LOOP = "L-1,SMF_OS2,pp-b,Front 2,pp-a,Front 2,jumper,MPO,12,MPO,12\n"
WHY = (
    "L-1 would close a loop through patch panels pp-a and pp-b: from pp-b Front 2 its path runs "
    "pp-b Front 2 → Rear 1, T-1, pp-a Rear 1 → Front 2 and comes back into L-1. "
    "A path through panels must end at a device's port: check where L-1 is plugged."
)


@pytest.fixture
def plant():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    _, a_rear, a_front = f.patch_panel("pp-a")
    _, b_rear, b_front = f.patch_panel("pp-b")
    f.jumper("J-1", gpu[0], a_front[0])
    f.trunk("T-1", a_rear[0], b_rear[0])
    f.jumper("J-2", b_front[0], leaf[0])
    return {"a_front": a_front, "b_front": b_front}


def _errors(r) -> dict:
    return {row["row"]: row["errors"] for row in r.json()["rows"] if row["errors"]}


def test_a_plan_row_closing_a_loop_is_refused_by_row_and_nothing_is_written(engineer_api, plant):
    csv = HEADER + GOOD + LOOP
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", csv, content_type="text/csv")
    assert r.status_code == 400 and _errors(r) == {2: {"path": WHY}}  # the dry run says it first
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 400 and _errors(r) == {2: {"path": WHY}}
    assert not Cable.objects.filter(label__in=["P-1", "L-1"]).exists()  # all or nothing, as ever
    # The link through the panels is as it was: gpu-1 eth0 to leaf-1 Ethernet1/1 over J-1, T-1, J-2.
    assert Link.objects.filter(active=True).count() == 1


def test_a_loop_made_by_two_rows_of_one_plan_names_both(engineer_api, plant):
    """[pp-c Rear 1]==T-2==[pp-d Rear 1] and [pp-d Front 1]--L-2--[pp-c Front 1], both new."""
    f.patch_panel("pp-c")
    f.patch_panel("pp-d")
    csv = (
        HEADER
        + "T-2,SMF_OS2,pp-c,Rear 1,pp-d,Rear 1,trunk,MPO,24,MPO,24\n"
        + "L-2,SMF_OS2,pp-d,Front 1,pp-c,Front 1,jumper,MPO,12,MPO,12\n"
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 400
    errors = _errors(r)
    assert set(errors) == {1, 2}
    assert errors[1]["path"].startswith("T-2 would close a loop through patch panels pp-c and pp-d")
    assert "L-2 (row 2)" in errors[1]["path"]
    assert errors[2]["path"].startswith("L-2 would close a loop through patch panels pp-c and pp-d")
    assert "T-2 (row 1)" in errors[2]["path"]
    assert not Cable.objects.filter(label__in=["T-2", "L-2"]).exists()


def test_the_api_refuses_the_same_cable_alone_with_the_same_words(engineer_api, plant):
    body = {
        "label": "L-1",
        "kind": "SMF_OS2",
        "role": "jumper",
        "a": {"device": "pp-b", "port_name": "Front 2", "connector_type": "MPO", "fibre_count": 12},
        "b": [{"device": "pp-a", "port_name": "Front 2", "connector_type": "MPO", "fibre_count": 12}],
    }
    r = engineer_api.post("/api/cables/", body, format="json")
    assert r.status_code == 400
    assert WHY in str(r.json())
    assert not Cable.objects.filter(label="L-1").exists()
    # Through the panels, the ports' paths still end where they did.
    trace = port_trace(plant["a_front"][1])
    assert trace.verdict.ok and not CableEnd.objects.filter(port=plant["a_front"][1]).exists()


def test_a_patch_cord_between_panels_that_ends_at_a_device_is_accepted(engineer_api, plant):
    """[pp-b Front 2]--X-1--[pp-a Front 3]: pp-a Front 3 -> T-1 position 3 -> pp-b Front 3, empty."""
    csv = HEADER + "X-1,SMF_OS2,pp-b,Front 2,pp-a,Front 3,jumper,MPO,12,MPO,12\n"
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 201, r.json()


def _panel_plan(pairs: int, first: int) -> list[dict]:
    """``pairs`` new panel pairs, each [pp-x Rear 1]==trunk==[pp-y Rear 1] with its 12 fronts'
    patch cords to free ports: every row walked through the panels, none a loop."""
    f.free_port_devices([f"dev-a{first}", f"dev-b{first}"], pairs * 12)
    rows = []
    for i in range(first, first + pairs):
        f.patch_panel(f"px-{i}")
        f.patch_panel(f"py-{i}")
        ends = {"a_device": f"px-{i}", "a_port": "Rear 1", "b_device": f"py-{i}", "b_port": "Rear 1"}
        rows.append({"label": f"TX-{i}", "kind": "CAT6A", **ends})
        for k in range(12):
            port = f"p{(i - first) * 12 + k}"
            rows.append(
                {"label": f"JX-{i}-{k}", "kind": "CAT6A", "a_device": f"dev-a{first}", "a_port": port}
                | {"b_device": f"px-{i}", "b_port": f"Front {k + 1}"}
            )
            rows.append(
                {"label": f"JY-{i}-{k}", "kind": "CAT6A", "a_device": f"py-{i}", "a_port": f"Front {k + 1}"}
                | {"b_device": f"dev-b{first}", "b_port": port}
            )
    return rows


def test_the_loop_check_reads_a_fixed_number_of_queries_whatever_the_plan_size(plant):
    counts = []
    for pairs, first in ((2, 0), (8, 100)):
        rows = _panel_plan(pairs, first)
        with CaptureQueriesContext(connection) as queries:
            result = cable_plan_import(rows=rows, dry_run=True)
        assert not result.errors
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]
