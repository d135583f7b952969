"""The cable page's first screen says why a cable is degraded or faulty, and where the link a
patched cable carries really ends (issue 31). The plant of ``conftest.plant``:
    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    rack A01: gpu-0001 U10, pp-a U40; rack B01: leaf-01 U46, pp-b U40
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus, Verdict
from inventory.core.choices import TestKind as Kind  # pytest would collect a name starting with Test
from inventory.models import CableTest
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
    # What was seen is the headline just above; the why line says who and when, not it again.
    headline = html.split('data-testid="evidence-conflict">', 1)[1].split("</p>", 1)[0]
    assert "jacket pinched at U12" in headline
    assert "Why faulty:" in text and "the fault reported above" in text and "tina" in text
    assert "jacket pinched" not in text
    # Above the ends: the reason is on the first screen, not two screens down in the history.
    assert html.index('data-testid="evidence-conflict"') < html.index('data-testid="status-why"')
    assert html.index('data-testid="status-why"') < html.index('data-testid="end-A"')


def test_the_why_says_what_was_seen_when_the_headline_says_something_else(plant, tech_client):
    """A later passing test settles the fault for the headline (no "fault open"), while the cable
    stays faulty until someone marks it otherwise: the why line then says what was seen."""
    tina = plant["member"]
    cable = plant["cables"]["J-102"]
    fieldwork.cable_fault_report(
        cable=cable, actor=tina, seen="jacket pinched at U12", status=CableStatus.FAULTY
    )
    CableTest.objects.create(
        cable=cable,
        kind=Kind.OLTS,
        tested_at=timezone.now() + timedelta(minutes=1),
        wavelength_nm=1310,
        loss_db=1.2,
        budget_db=3.0,
        margin_db=1.8,
        verdict=Verdict.PASS,
    )
    html = tech_client.get("/c/J-102").content.decode()
    why = re.sub(r"<[^>]+>", " ", html.split('data-testid="status-why">', 1)[1].split("</p>", 1)[0])
    assert "jacket pinched at U12" in why and "tina" in why and "above" not in why


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
