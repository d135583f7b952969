"""The alert page sends a technician to the right place: each end with its rack (linked), U,
device, cage and logical port, named A/B as the cable page names them; which end to look at
first; evidence in words; times said against "last seen"; the path numbered from 1, each segment
with its state from the one decision.

Plant (``conftest.plant``)::

    Rack A01: gpu-0001 (U10)        Rack B01: leaf-01 (U46)
    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]
    [gpu-0001 eth1]--J-100--[pp-a]==T-100==[pp-b]--J-101--[leaf-01 Ethernet2/1]
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.models import Alert, Link

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _alert(link: Link, *, ends: dict, hours_ago: float = 0.0, link_class: str = "rail") -> Alert:
    seen = timezone.now() - timedelta(hours=hours_ago)
    alert = Alert.objects.create(
        key=f"link_flap:link:{link.pk}",
        rule="link_flap",
        severity="page",
        link=link,
        opened_at=seen - timedelta(hours=1),
        updated_at=seen,
        summary="Link flap: Link went down and up 7 times in the last hour",
        recommendation="Take the link out of service and swap the module at the flapping end.",
        evidence={
            "link": {"id": link.pk, "pmd": "400GBASE-DR4", "fec": "RS544", "class": link_class},
            "ends": ends,
            "reporting": {"a": True, "b": False},
        },
    )
    alert.cables.set([s.cable_id for s in link.segments.all()])
    return alert


def test_each_end_where_to_go_in_the_cable_pages_terms_and_which_end_flaps(plant, tech_client):
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    gpu_side = "a" if link.a_port.device.name == "gpu-0001" else "b"
    leaf_side = "b" if gpu_side == "a" else "a"
    alert = _alert(
        link,
        ends={
            gpu_side: {"port_id": 1, "link_down": 0.0, "error_recovery": 0.0},
            leaf_side: {"port_id": 2, "link_down": 7.0, "error_recovery": 0.0},
        },
    )
    html = tech_client.get(f"/alerts/{alert.pk}/").content.decode()

    # J-102 runs from gpu-0001 (its end A) to leaf-01 (its end B), as its own page says.
    cable_page = _text(tech_client.get("/c/J-102").content.decode())
    assert "A A01 · U10 · gpu-0001" in cable_page and "B B01 · U46 · leaf-01" in cable_page
    end_a = html.split('data-testid="alert-end-A"', 1)[1].split('data-testid="alert-end-B"', 1)[0]
    end_b = html.split('data-testid="alert-end-B"', 1)[1].split("</section>", 1)[0]
    assert 'href="/r/A01"' in end_a and "U10" in end_a and "gpu-0001" in end_a and ">eth0<" in end_a
    assert 'href="/r/B01"' in end_b and "U46" in end_b and "leaf-01" in end_b and ">Ethernet1/1<" in end_b
    assert re.search(r'class="cage">OSFP\d+', end_b)  # the cage on the faceplate, in bold
    assert html.index('data-testid="alert-end-A"') < html.index('data-testid="alert-end-B"')

    # Which end flaps: B (the leaf), with where it is.
    first = _text(html.split('data-testid="worst-end"', 1)[1].split("</p>", 1)[0])
    assert first.startswith("> Look first at End B , the end that flaps") or "Look first at End B" in first
    assert "rack B01" in first and "U46" in first and "leaf-01" in first and "Ethernet1/1" in first
    assert "look here first" in _text(end_b) and "look here first" not in _text(end_a)
    # Telemetry from each end is said on that end's card, not as "A end"/"B end" of the link.
    assert "Telemetry from yes" in _text(end_a if gpu_side == "a" else end_b)


def test_evidence_words_times_and_path_rows(plant, tech_client):
    link = Link.objects.get(active=True, segments__cable__label="T-100")
    alert = _alert(link, ends={"a": {"port_id": 1, "link_down": 7.0, "error_recovery": 0.0}}, hours_ago=25)
    page = _text(tech_client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "Link class rail" in page and "Direction" not in page
    # "7 times in the last hour", last seen 25 hours ago: said as of last seen.
    times = page.split("last seen", 1)[1]
    assert "(25 hours ago)" in times
    assert "As last seen," in page and page.index("As last seen,") < page.index("7 times in the last hour")
    # The path, numbered from 1, each segment with the one decision's word for it.
    html = tech_client.get(f"/alerts/{alert.pk}/").content.decode()
    rows = re.findall(r'<tr data-testid="path-row"><td>(\d+)</td><td><a[^>]*>([^<]+)</a>', html)
    assert rows == [("1", "J-100"), ("2", "T-100"), ("3", "J-101")]
    assert html.count('data-state="alert"') == 3  # a page alert on their link: every segment says so
