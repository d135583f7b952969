"""Repairs that learn (issue 35): recorded outcomes re-rank the actions, the alert's
recommendation and the cable's next step follow, the page and the API show the ranking and take a
repair in two taps, and bad input changes nothing.

Topology (one site, the technician's team looks after it)::

    [gpu-l eth0]--J-L0--[leaf-l Ethernet1/1]     link 0: the history of repairs
    [gpu-l eth1]--J-L1--[leaf-l Ethernet1/2]     link 1: the alert being worked on now
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from inventory.core.choices import AlertState, DeviceRole, RepairOutcome
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Alert, Link, Repair, Site, Team
from inventory.services import alerts as svc
from tests import factories as f

pytestmark = pytest.mark.django_db

ADVICE = (
    "Errors only at the B end's receiver (the A -> B direction): suspect the A end's transmitting module "
    "or the B end's receiving module. Clean and re-seat both ends first; if errors persist, replace the A "
    "module, then the B module."
)


def _finding(link: Link) -> Finding:
    return Finding(
        key=f"fec_degradation:link:{link.pk}",
        rule="fec_degradation",
        severity="notify",
        link_id=link.pk,
        port_id=link.b_port_id,
        headline="pre-FEC BER 2.0e-06 at the B end receiver, threshold 5.0e-08",
        recommendation=ADVICE,
        recommendation_code="replace_module",
        ends={"b": {"metric": "pre_fec_ber", "value": 2e-6, "threshold": 5e-8}},
    )


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture
def scene(settings):
    settings.CABLETRACK_REPAIR_HOLD_HOURS = 1
    rack = f.RackFactory(name="R-LEARN")
    _, gpu = f.twin_port_device(
        "gpu-l", rack=rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-l", rack=rack, u=30)
    f.jumper("J-L0", gpu[0], leaf[0])
    f.jumper("J-L1", gpu[1], leaf[1])
    tech = f.UserFactory(username="tech-learn", role="technician")
    f.field_crew(tech)
    links = [Link.objects.get(active=True, segments__cable__label=lbl) for lbl in ("J-L0", "J-L1")]
    return {"links": links, "tech": tech, "t0": timezone.now() - timedelta(days=3)}


def _history(scene, outcomes: list[tuple[str, bool]]) -> None:
    """On link 0, one alert after another: the repair recorded, then the rule either clean past
    its window (resolved) or firing again (back); three hours apart, so each is a new alert."""
    link, tech = scene["links"][0], scene["tech"]
    ports = {link.a_port_id, link.b_port_id}
    for i, (action, held) in enumerate(outcomes):
        t = scene["t0"] + timedelta(hours=3 * i)
        alert, opened = svc.alert_raise(finding=_finding(link), now=t)
        assert opened
        svc.repair_record(alert=alert, action=action, end="A", actor=tech, now=t + timedelta(minutes=1))
        after = t + timedelta(minutes=20)  # past fec_degradation's 15-minute clean window
        svc.alerts_apply(
            findings=[] if held else [_finding(link)], holding=set(), reporting_port_ids=ports, now=after
        )
        if not held:  # back: it stays open until the next clean evaluation
            svc.alerts_apply(
                findings=[], holding=set(), reporting_port_ids=ports, now=after + timedelta(minutes=20)
            )
        assert Alert.objects.get(pk=alert.pk).state == AlertState.RESOLVED


def test_outcomes_that_favour_the_module_swap_put_it_first_and_the_recommendation_follows(scene):
    now_alert, _ = svc.alert_raise(finding=_finding(scene["links"][1]), now=timezone.now())
    assert now_alert.recommendation == ADVICE  # the prior's first step is the rule's own advice
    api = APIClient()
    api.force_login(scene["tech"])
    before = api.get(f"/api/alerts/{now_alert.pk}/").json()["ranking"]
    assert [a["action"] for a in before["actions"]][:2] == ["clean", "swap_module"]
    assert before["moved"] is False and before["actions"][0]["repairs"] == 0

    # Cleaning came back every time at this site; swapping the module held every time.
    _history(scene, [("clean", False), ("swap_module", True)] * 5)
    report = svc.repairs_judge(now=timezone.now())
    assert (report.fixed, report.came_back) == (5, 5)
    assert set(Repair.objects.values_list("action", "outcome")) == {
        ("clean", RepairOutcome.CAME_BACK),
        ("swap_module", RepairOutcome.FIXED),
    }

    after = api.get(f"/api/alerts/{now_alert.pk}/").json()
    ranking = after["ranking"]
    # clean: (0 fixed + 0.50 x 4) / (5 + 4) = 22%, below even the untried cable replacement (25%)
    assert [a["action"] for a in ranking["actions"]] == [
        "swap_module",
        "reseat",
        "replace_cable",
        "clean",
        "other",
    ]
    assert ranking["moved"] is True
    top = ranking["actions"][0]
    assert (top["fixed"], top["repairs"]) == (5, 5) and top["rate"] == pytest.approx(
        (5 + 0.45 * 4) / 9, abs=1e-3
    )
    assert (
        ranking["symptoms"] == "one" and ranking["scope"] == "this module model at this site, same symptoms"
    )
    # The alert's recommendation (and so the cable's next step) reads the top action now.
    assert after["recommendation"].startswith("Swap the module first: it fixed 5 of 5 repairs like this")
    assert after["recommendation"].endswith(ADVICE)
    cable_page = _text(api.get("/c/J-L1").content.decode())
    assert "Swap the module first" in cable_page

    # The report at the desk: the month's first-time-fix rate, and the vendor's.
    data = api.get("/api/reports/repairs/").json()
    assert sum(m["judged"] for m in data["by_month"]) == 10
    assert sum(m["fixed"] for m in data["by_month"]) == 5
    (vendor,) = data["by_vendor"]
    assert vendor["first_time_fix_rate"] == 0.5 and vendor["vendor"] != "unknown"
    page = api.get("/repairs/report/").content.decode()
    assert vendor["vendor"] in page and "50%" in _text(page)
    assert api.get("/api/reports/repairs/?months=0").status_code == 400


def test_the_alert_page_takes_a_repair_in_two_taps_and_shows_the_ranking(scene):
    alert, _ = svc.alert_raise(finding=_finding(scene["links"][1]), now=timezone.now())
    client = Client()
    client.force_login(scene["tech"])
    html = client.get(f"/alerts/{alert.pk}/").content.decode()
    form = html.split('data-testid="repair-form"', 1)[1].split("</form>", 1)[0]
    buttons = re.findall(r'name="action" value="([a-z_]+)"', form)
    assert buttons == ["clean", "swap_module", "reseat", "replace_cable", "other"]  # best first
    # the end to look at first, preset, named with the cable plugged there
    assert re.search(r'name="end" value="B:J-L1"[^>]*checked', form)
    ranking = _text(html.split('data-testid="repair-ranking"', 1)[1].split("</section>", 1)[0])
    assert "Clean the connectors 50% (prior, no repairs yet)" in ranking
    # the rates are each repair's own: a reader is told they need not add up to 100 %
    assert "each on its own, so they need not add up to 100 %" in ranking

    r = client.post(f"/alerts/{alert.pk}/repairs", {"end": "B", "action": "clean"})
    assert r.status_code == 302
    again = client.post(f"/alerts/{alert.pk}/repairs", {"end": "B", "action": "clean"}, follow=True)
    assert "Already recorded" in again.content.decode()  # a double tap records one repair
    repair = Repair.objects.get()
    assert (repair.action, repair.end, repair.done_by, repair.symptoms) == (
        "clean",
        "B",
        scene["tech"],
        "one",
    )
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    row = _text(page.split('data-testid="repair-row"', 1)[1].split("</tr>", 1)[0])
    assert "Clean the connectors, End B of J-L1" in row and "Pending" in row and "tech-learn" in row
    assert "Watching after the cleaning at End B of J-L1" in _text(page)

    bad = client.post(f"/alerts/{alert.pk}/repairs", {"end": "B", "action": "pray"})
    assert bad.status_code == 400 and "Select a valid choice" in bad.content.decode()
    assert Repair.objects.count() == 1


def test_bad_repairs_are_refused_and_write_nothing(scene, user_with_role):
    alert, _ = svc.alert_raise(finding=_finding(scene["links"][1]), now=timezone.now())
    api = APIClient()
    api.force_login(scene["tech"])
    url = f"/api/alerts/{alert.pk}/repairs/"

    r = api.post(url, {"action": "pray", "end": "A"}, format="json")
    assert r.status_code == 400 and "action" in r.json()
    r = api.post(url, {"action": "clean", "end": "C"}, format="json")
    assert r.status_code == 400 and "end" in r.json()
    viewer = APIClient()
    viewer.force_login(user_with_role("viewer"))
    assert viewer.post(url, {"action": "clean", "end": "A"}, format="json").status_code == 403

    # A technician of another site's team: refused by the site scope, on the API and the page.
    other = f.UserFactory(username="tech-elsewhere", role="technician")
    elsewhere = Site.objects.create(name="Elsewhere", slug="elsewhere")
    Team.objects.create(name="Elsewhere crew").members.add(other)
    elsewhere.team = Team.objects.get(name="Elsewhere crew")
    elsewhere.save()
    outsider = APIClient()
    outsider.force_login(other)
    assert outsider.post(url, {"action": "clean", "end": "A"}, format="json").status_code == 403
    page = Client()
    page.force_login(other)
    assert page.post(f"/alerts/{alert.pk}/repairs", {"action": "clean", "end": "A"}).status_code == 403
    refused = page.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'data-testid="repair-form"' not in refused and "you may not record a repair here" in refused
    assert not Repair.objects.exists()

    # A resolved alert takes no repair.
    link = scene["links"][1]
    svc.alerts_apply(
        findings=[], holding=set(), reporting_port_ids={link.a_port_id, link.b_port_id}, now=timezone.now()
    )
    r = api.post(url, {"action": "clean", "end": "A"}, format="json")
    assert r.status_code == 400 and "resolved" in r.json()["alert"][0]
    assert not Repair.objects.exists()

    # The good one: 201, then listed with its verdict on the alert.
    svc.alert_raise(finding=_finding(link), now=timezone.now())
    r = api.post(url, {"action": "swap_module", "end": "A", "note": "module A replaced"}, format="json")
    assert r.status_code == 201 and r.json()["outcome"] == "pending"
    listed = api.get(url).json()
    assert [x["action"] for x in listed["repairs"]] == ["swap_module"]
    assert api.get(f"/api/alerts/{alert.pk}/").json()["repairs"][0]["note"] == "module A replaced"
