"""The desk plan import says a loop through panels by row, as the API does (the check itself:
``tests/inventory/api/test_plan_import_loops.py``).

Plant (``conftest.plant``), the row in brackets::

    [pp-a Rear 1]==T-100==[pp-b Rear 1]; (L-9: [pp-a Front 5]--[pp-b Front 5]) comes back into itself
"""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from inventory.models import Cable

pytestmark = pytest.mark.django_db

CSV = (
    "label,kind,a_device,a_port,b_device,b_port,role,a_connector,a_fibres,b_connector,b_fibres\n"
    "N-1,SMF_OS2,gpu-0001,eth2,leaf-01,Ethernet1/2,,MPO,12,MPO,12\n"
    "L-9,SMF_OS2,pp-a,Front 5,pp-b,Front 5,jumper,MPO,12,MPO,12\n"
)


def test_the_desk_import_refuses_the_row_closing_a_loop_and_applies_nothing(plant, engineer_client):
    upload = SimpleUploadedFile("plan.csv", CSV.encode(), "text/csv")
    html = engineer_client.post("/cables/import", {"file": upload}).content.decode()
    assert "The plan has errors" in html and 'name="apply"' not in html
    rows = re.findall(
        r"<tr><td class=\"num\">(\d+)</td><td class=\"mono\">([^<]*)</td><td>(.*?)</td></tr>", html
    )
    assert rows == [
        (
            "2",
            "L-9",
            '<p class="error">Path: L-9 would close a loop through patch panels pp-a and pp-b: from '
            "pp-a Front 5 its path runs pp-a Front 5 → Rear 1, T-100, pp-b Rear 1 → Front 5 and comes "
            "back into L-9. A path through panels must end at a device&#x27;s port: check where L-9 "
            "is plugged.</p>",
        )
    ]
    assert not Cable.objects.filter(label__in=["N-1", "L-9"]).exists()
