"""The alert page sends a technician to the right place: each end with its rack (linked), U,
device, cage and logical port, named A/B as the cable page names them; which end to look at
first; evidence in words; times said against "last seen"; the path numbered from 1, each segment
with its state from the one decision.

Plant (``conftest.plant``)::

    Rack A01: gpu-0001 (U10)        Rack B01: leaf-01 (U46)
    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]
    [gpu-0001 eth1]--J-100--[pp-a]==T-100==[pp-b]--J-101--[leaf-01 Ethernet2/1]

On a link through the panels the two ends are two cables' ends: each is named with its cable
("End B of J-101"), the one cable the alert degrades is the one plugged at the end it sends the
technician to first, and a repair recorded at an end lands on that cable end.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertRule, CableStatus, Polarity, Severity, Verdict
from inventory.core.choices import TestKind as Kind
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Alert, Cable, CableTest, Link
from inventory.services.alerts import alert_raise
from tests import factories as f

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


def _tested(plant, margins: dict[str, float]) -> None:
    """Each cable named in production, with a passing power-meter test of the margin given."""
    for label, margin in margins.items():
        cable = Cable.objects.get(label=label)
        CableTest.objects.create(
            cable=cable,
            kind=Kind.OLTS,
            tested_at=timezone.now() - timedelta(days=2),
            wavelength_nm=1310,
            loss_db=3.0 - margin,
            budget_db=3.0,
            margin_db=margin,
            verdict=Verdict.PASS,
        )
        cable.status = CableStatus.IN_PRODUCTION
        cable.save()


def _flap(link: Link, *, leaf_down: float = 7.0, gpu_down: float = 0.0) -> tuple[Alert, str]:
    """A flap on ``link``, opened the one way alerts open (``alert_raise``: it degrades the cable
    it names). Returns (alert, the leaf's link end)."""
    leaf = "b" if link.b_port.device.name == "leaf-01" else "a"
    gpu = "a" if leaf == "b" else "b"
    alert, opened = alert_raise(
        finding=Finding(
            key=f"link_flap:link:{link.pk}",
            rule=AlertRule.LINK_FLAP,
            severity=Severity.PAGE,
            link_id=link.pk,
            port_id=None,
            headline="Link went down and up 7 times in the last hour",
            recommendation="Re-seat both modules and the cable ends; if it flaps again, replace the "
            "module at the end that reports the events.",
            recommendation_code="reseat",
            ends={
                leaf: {"link_down": leaf_down, "error_recovery": 0.0},
                gpu: {"link_down": gpu_down, "error_recovery": 0.0},
            },
        ),
        now=timezone.now(),
    )
    assert opened
    return alert, leaf


def test_a_link_through_panels_names_the_cable_at_each_end_and_a_repair_lands_on_that_cable_end(
    plant, tech_client
):
    """The leaf's end flaps, and the GPU's jumper has the least test margin::

        [gpu-0001 eth1]--J-100 (0.5 dB margin)--[pp-a]==T-100==[pp-b]--J-101--[leaf-01 Ethernet2/1] flaps

    The alert degrades J-101, the cable plugged at the end its page sends the technician to
    first, and only J-101; each end says which cable's end it is; a repair recorded at the end the
    page presets lands on J-101's end B at leaf-01 (not J-100's, nor J-101's panel end), and one at
    the other end on J-100's end A at gpu-0001."""
    _tested(plant, {"J-100": 0.5, "T-100": 1.5, "J-101": 1.2})
    alert, _ = _flap(Link.objects.get(active=True, segments__cable__label="T-100"))
    html = tech_client.get(f"/alerts/{alert.pk}/").content.decode()

    # J-101 runs from pp-b (its end A) to leaf-01 (its end B); J-100 from gpu-0001 (A) to pp-a (B).
    assert "A B01 · U40 · pp-b" in _text(tech_client.get("/c/J-101").content.decode())
    first = _text(html.split('data-testid="worst-end"', 1)[1].split("</p>", 1)[0])
    assert "Look first at End B of J-101 , the end that flaps" in first and "leaf-01" in first
    end_b = _text(html.split('data-testid="alert-end-B"', 1)[1].split("</h2>", 1)[0])
    end_a = _text(html.split('data-testid="alert-end-A"', 1)[1].split("</h2>", 1)[0])
    assert "End B of J-101" in end_b and "look here first" in end_b
    assert "End A of J-100" in end_a and "look here first" not in end_a
    # The one cable it degrades is the one it leads to, and the page says the others keep theirs.
    one = _text(html.split('data-testid="alert-one-cable"', 1)[1].split("</p>", 1)[0])
    assert "This alert marks one cable of the link degraded: J-101 , plugged at End B (leaf-01" in one
    assert "The link's other cables (J-100, T-100) keep their status." in one
    status = dict(Cable.objects.values_list("label", "status"))
    assert status["J-101"] == CableStatus.DEGRADED
    assert status["J-100"] == status["T-100"] == CableStatus.IN_PRODUCTION

    # The technician re-seats at the end the page presets: End B of J-101, at leaf-01.
    form = html.split('data-testid="repair-form"', 1)[1].split("</form>", 1)[0]
    choices = dict(re.findall(r'name="end" value="([^"]+)"[^>]*> <span>([^<]+)</span>', form))
    preset = re.search(r'name="end" value="([^"]+)"[^>]*checked', form).group(1)
    assert choices[preset].startswith("End B of J-101 · leaf-01 OSFP")
    other = next(v for v, words in choices.items() if words.startswith("End A of J-100 · gpu-0001 OSFP"))
    r = tech_client.post(f"/alerts/{alert.pk}/repairs", {"end": preset, "action": "reseat"}, follow=True)
    assert "Recorded: Re-seat (End B of J-101)" in _text(r.content.decode())
    repairs = tech_client.get(f"/api/alerts/{alert.pk}/repairs/").json()["repairs"]
    assert [(x["end"], x["cable"]) for x in repairs] == [("B", "J-101")]
    # Every cable of the link says where it was done, in the same words: J-101's end B.
    for label in ("J-101", "J-100"):
        assert "re-seated at End B of J-101, watching" in _text(
            tech_client.get(f"/c/{label}").content.decode()
        )

    # The other end, from the page's other choice: J-100's end A, at gpu-0001.
    tech_client.post(f"/alerts/{alert.pk}/repairs", {"end": other, "action": "clean"})
    repairs = tech_client.get(f"/api/alerts/{alert.pk}/repairs/").json()["repairs"]
    assert [(x["end"], x["cable"]) for x in repairs] == [("A", "J-100"), ("B", "J-101")]
    page = _text(tech_client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "Clean the connectors, End A of J-100" in page and "Re-seat, End B of J-101" in page
    assert "cleaned at End A of J-100, watching" in _text(tech_client.get("/c/J-101").content.decode())


def test_with_both_ends_alike_the_alert_names_the_segment_with_the_least_margin(plant, tech_client):
    """Both ends flap alike: no end to look at first; the alert degrades the segment with the
    least test margin, the trunk between the panels, and its page says which segment it is."""
    _tested(plant, {"J-100": 1.5, "T-100": 0.4, "J-101": 1.2})
    alert, _ = _flap(Link.objects.get(active=True, segments__cable__label="T-100"), gpu_down=7.0)
    page = _text(tech_client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "Both ends report it alike" in page and "Look first" not in page
    assert (
        "This alert marks one cable of the link degraded: T-100 , segment 2 of 3 on the path. "
        "The link's other cables (J-100, J-101) keep their status." in page
    )
    status = dict(Cable.objects.values_list("label", "status"))
    assert status["T-100"] == CableStatus.DEGRADED
    assert status["J-100"] == status["J-101"] == CableStatus.IN_PRODUCTION


def test_a_repair_at_an_end_two_cables_name_alike_must_name_the_cable(plant, engineer_client):
    """Through the panels both link ends can be the same letter of two cables (each jumper's A
    at its device)::

        [gpu-0001 eth2]--J-103 (A at the GPU)--[pp-a]==T-100==[pp-b]--J-104 (A at the leaf)--[leaf-01]

    The page names both "End A", each with its cable; a repair "at End A" by the API is refused
    until it names the cable, and then lands on that cable's end."""
    f.jumper("J-103", plant["gpu"][2], plant["pa_front"][1], polarity=Polarity.A)
    f.jumper("J-104", plant["leaf"][3], plant["pb_front"][1], polarity=Polarity.A)
    _tested(plant, {"J-103": 1.5, "T-100": 1.5, "J-104": 1.2})
    alert, _ = _flap(Link.objects.get(active=True, segments__cable__label="J-104"))
    page = _text(engineer_client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "End A of J-103" in page and "End A of J-104" in page
    assert "Look first at End A of J-104" in page
    url = f"/api/alerts/{alert.pk}/repairs/"
    r = engineer_client.post(url, {"action": "clean", "end": "A"}, content_type="application/json")
    assert r.status_code == 400 and "name the cable too" in r.content.decode()
    r = engineer_client.post(
        url, {"action": "clean", "end": "A", "cable": "J-104"}, content_type="application/json"
    )
    assert r.status_code == 201 and (r.json()["end"], r.json()["cable"]) == ("A", "J-104")


def test_the_links_other_cables_name_the_cable_the_alert_points_at(plant, tech_client, engineer_client):
    """The leaf's end flaps, so the alert degrades J-101. The trunk T-100 and the GPU's jumper
    J-100 are held too (a page alert on their link), and each says which cable the alert points
    at, on its page and in the API; J-101 itself, the suspect, does not name itself."""
    _tested(plant, {"J-100": 0.5, "T-100": 1.5, "J-101": 1.2})
    _flap(Link.objects.get(active=True, segments__cable__label="T-100"))

    for label in ("T-100", "J-100"):
        page = _text(tech_client.get(f"/c/{label}").content.decode())
        assert "Page alert open: Link flap on J-101." in page
        api = engineer_client.get(f"/api/cables/{label}/").json()["next_step"]
        assert "Page alert open: Link flap on J-101" in api["headline"]
    own = _text(tech_client.get("/c/J-101").content.decode())
    assert "Page alert open: Link flap." in own and "Link flap on J-101" not in own
