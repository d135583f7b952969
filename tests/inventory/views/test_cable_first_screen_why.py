"""The cable page's first screen says why a cable is degraded or faulty, and where the link a
patched cable carries really ends (issue 31). The plant of ``conftest.plant``:
    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    rack A01: gpu-0001 U10, pp-a U40; rack B01: leaf-01 U46, pp-b U40
"""

import re

import pytest

from inventory.core.choices import CableStatus
from inventory.services.plant import fieldwork

pytestmark = pytest.mark.django_db


def test_a_faulty_cable_says_why_on_its_first_screen(plant, tech_client):
    tina = plant["member"]
    fieldwork.cable_fault_report(
        cable=plant["cables"]["J-102"], actor=tina, seen="jacket pinched at U12", status=CableStatus.FAULTY
    )
    html = tech_client.get("/c/J-102").content.decode()
    why = html.split('data-testid="status-why">', 1)[1].split("</p>", 1)[0]
    text = re.sub(r"<[^>]+>", " ", why)
    assert "Why faulty:" in text and "jacket pinched at U12" in text and "tina" in text
    # Above the ends: the reason is on the first screen, not two screens down in the history.
    assert html.index('data-testid="status-why"') < html.index('data-testid="end-A"')


def test_a_cable_in_production_has_no_why(plant, tech_client):
    assert 'data-testid="status-why"' not in tech_client.get("/c/J-102").content.decode()


def test_a_patched_jumper_names_the_far_end_of_its_link_beside_its_own_ends(plant, tech_client):
    """J-101 runs from panel pp-b to leaf-01; the link it carries starts at gpu-0001 eth1 in A01."""
    html = tech_client.get("/c/J-101").content.decode()
    block = html.split('data-testid="link-ends">', 1)[1].split("</div>", 1)[0]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block))
    assert "J-100, T-100, J-101" in text
    assert "A01 U10 gpu-0001 OSFP1/2 eth1" in text and "B01 U46 leaf-01 OSFP2 Ethernet2/1" in text
    assert 'href="/r/A01"' in block
    assert html.index('data-testid="link-ends"') < html.index('aria-label="Facts"')


def test_a_direct_cable_shows_no_link_ends(plant, tech_client):
    assert 'data-testid="link-ends"' not in tech_client.get("/c/J-102").content.decode()
