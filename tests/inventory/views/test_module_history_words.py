"""A module's page (a serial tapped on the cable page) says its history in the cable page's
words: after a swap it said "cage: 166 → –", "Removed by: – → 3" and "Removed at: – →
2026-12-06 18:10:16.849114+00:00" (database ids and an ISO moment).

Plant of ``conftest.plant``: [gpu-0001 eth0 (OSFP1)]--J-102--[leaf-01 Ethernet1/1].
"""

import re

import pytest

from tests import factories as f
from tests.inventory.views.conftest import without_name_spans

pytestmark = pytest.mark.django_db


def test_a_swapped_out_modules_history_names_the_cage_and_the_person_and_says_when_in_words(
    plant, site_tech_client
):
    cage = plant["gpu"][0].cage
    old = cage.transceiver
    f.module(serial="NEW-0001")
    resp = site_tech_client.post(
        "/c/J-102/swap",
        {"cage": cage.pk, "new_serial": "NEW-0001", "old_to": "failed", "notes": "dead laser"},
    )
    assert resp.status_code == 302
    html = without_name_spans(site_tech_client.get(f"/t/{old.pk}").content.decode())
    changes = re.findall(r'<span class="change">([^<]*)</span>', html)
    assert f"Cage: {cage.name} → –" in changes
    assert "Removed by: – → site-tech" in changes
    assert any(re.fullmatch(r"Removed at: – → today \d\d:\d\d", c) for c in changes), changes
    assert not [c for c in changes if re.search(r"→ \d+$|\d{4}-\d\d-\d\d", c)], changes
