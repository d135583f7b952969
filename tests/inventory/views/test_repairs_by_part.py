"""A replacement or a module swap is a repair: recorded on the open alert it moves, by the form
the technician used, in the same transaction, once; and whatever the repair, the cable page, the
home and rack lists, the alert page and the API say "<what was done>, watching" alike.

Plant (``conftest.plant``)::

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]        the link that flaps (End A at the GPU)
    [gpu-0001 eth1]--J-100--[pp-a]==T-100==[pp-b]--J-101--[leaf-01 Ethernet2/1]
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertState, RepairSource, Severity
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Alert, Link, Repair
from inventory.services import alerts as svc
from tests import factories as f

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _flapping(label: str = "J-102") -> Alert:
    link = Link.objects.get(active=True, segments__cable__label=label)
    finding = Finding(
        key=f"link_flap:link:{link.pk}",
        rule="link_flap",
        severity=Severity.PAGE,
        link_id=link.pk,
        port_id=link.a_port_id,
        headline="7 link-down events in 15 minutes",
        recommendation="Swap the module at the flapping end.",
        recommendation_code="swap_module",
        ends={"a": {"link_down_events": 7.0}},
    )
    alert, opened = svc.alert_raise(finding=finding, now=timezone.now() - timedelta(minutes=2))
    assert opened
    return alert


def _api_repair(client, alert: Alert, **body):
    return client.post(
        f"/api/alerts/{alert.pk}/repairs/", data=json.dumps(body), content_type="application/json"
    )


def test_a_replace_records_its_repair_on_the_alert_once_whichever_page_records_it_next(
    plant, engineer_client
):
    alert = _flapping()
    r = engineer_client.post("/c/J-102/replace", {"new_label": "R-102", "reason": "flapping"})
    assert r.status_code == 302

    (repair,) = Repair.objects.filter(alert=alert)
    assert (repair.action, repair.end, repair.source) == ("replace_cable", "both", RepairSource.REPLACE)
    assert repair.done_by.username == "eng" and repair.outcome == "pending"
    # the symptoms as the alert page's form would have kept them: one direction, at the A end
    assert (repair.symptoms, repair.symptom_end) == ("one", "a")
    assert "J-102 by R-102" in repair.note and "flapping" in repair.note

    # Same visit, the alert page: "Replace the cable" at the end it presets is that repair.
    page = engineer_client.post(
        f"/alerts/{alert.pk}/repairs", {"end": "A", "action": "replace_cable"}, follow=True
    )
    assert "Already recorded: Replace the cable" in _text(page.content.decode())
    # ... and so by API, at any end (a cable is replaced whole): 200 with the same repair.
    api = _api_repair(engineer_client, alert, action="replace_cable", end="B")
    assert api.status_code == 200 and api.json()["id"] == repair.pk and api.json()["source"] == "replace"
    assert Repair.objects.filter(alert=alert).count() == 1

    # Another action is another repair.
    engineer_client.post(f"/alerts/{alert.pk}/repairs", {"end": "A", "action": "clean"})
    assert Repair.objects.filter(alert=alert).count() == 2


def test_a_repair_recorded_on_the_alert_before_the_swap_is_the_swaps_repair(plant, tech_client):
    """The technician taps "Swap the module" at End A first, then records the new module's serial
    on the swap form: one repair. A second swap an hour later is a repair of its own."""
    alert = _flapping()
    cage = plant["gpu"][0].cage
    old_serial = cage.transceiver.serial
    f.module(serial="NEW-0001")
    r = tech_client.post(f"/alerts/{alert.pk}/repairs", {"end": "A", "action": "swap_module"})
    assert r.status_code == 302
    r = tech_client.post(
        "/c/J-102/swap",
        {"cage": cage.pk, "new_serial": "NEW-0001", "old_to": "failed", "notes": "dead laser"},
    )
    assert r.status_code == 302, r.content.decode()[:500]
    (repair,) = Repair.objects.filter(alert=alert)
    assert (repair.action, repair.end, repair.source) == ("swap_module", "A", RepairSource.ALERT)
    alert.refresh_from_db()
    # the alert watches from the swap, in its words
    assert (
        alert.replacement == f"module swap at End A of J-102 (gpu-0001 {cage.name}: {old_serial} by NEW-0001)"
    )

    # Next hour, another swap of the same cage by the same person: a second repair, by the form.
    Repair.objects.filter(pk=repair.pk).update(done_at=timezone.now() - timedelta(hours=2))
    f.module(serial="NEW-0002")
    r = tech_client.post("/c/J-102/swap", {"cage": cage.pk, "new_serial": "NEW-0002", "old_to": "failed"})
    assert r.status_code == 302
    latest = Repair.objects.filter(alert=alert).order_by("-done_at").first()
    assert Repair.objects.filter(alert=alert).count() == 2
    assert (latest.action, latest.end, latest.source) == ("swap_module", "A", RepairSource.SWAP)
    assert latest.done_by.username == "tech" and "NEW-0001 by NEW-0002" in latest.note


def test_a_swap_that_fails_records_no_repair(plant, tech_client):
    """The swap and its repair are one transaction: a swap refused writes neither."""
    alert = _flapping()
    cage = plant["gpu"][0].cage
    r = tech_client.post("/c/J-102/swap", {"cage": cage.pk, "new_serial": "NOPE-1", "old_to": "spare"})
    assert r.status_code == 200
    assert not Repair.objects.filter(alert=alert).exists()
    alert.refresh_from_db()
    assert alert.watching_since is None


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ({"action": "clean", "end": "B"}, "cleaned at End B of J-102, watching"),
        ({"action": "reseat", "end": "both"}, "re-seated at both ends of J-102, watching"),
        ({"action": "other", "end": "na"}, "repaired, watching"),
        ({"action": "swap_module", "end": "A"}, "module swapped at End A of J-102, watching"),
        ("swap form", "module swapped at End A of J-102, watching"),
        ("replace form", "replaced, watching"),
    ],
)
def test_every_page_and_the_api_say_what_the_alert_watches_after(plant, engineer_client, how, words):
    alert = _flapping()
    label = "J-102"
    if how == "replace form":
        engineer_client.post("/c/J-102/replace", {"new_label": "R-102"})
        label = "R-102"
    elif how == "swap form":
        f.module(serial="NEW-0001")
        cage = plant["gpu"][0].cage
        engineer_client.post("/c/J-102/swap", {"cage": cage.pk, "new_serial": "NEW-0001", "old_to": "failed"})
    else:
        assert engineer_client.post(f"/alerts/{alert.pk}/repairs", how).status_code == 302
    alert.refresh_from_db()
    assert alert.state == AlertState.OPEN and alert.watching == words

    # The cable page (the one decision: its headline and its reasons) and its alert card.
    page = _text(engineer_client.get(f"/c/{label}").content.decode())
    assert f"Page alert open: Link flap ({words})" in page
    assert f"Page · Link flap ({words})" in page
    assert "replaced, watching" not in page or words == "replaced, watching"
    # Home and the rack page list it so.
    for url in ("/", "/r/A01"):
        html = engineer_client.get(url).content.decode()
        row = _text(html.split(f'href="/alerts/{alert.pk}/"', 1)[1].split("</li>", 1)[0])
        assert f"({words})" in row, url
    # The alert page says what it watches after, in the same words' long form.
    html = engineer_client.get(f"/alerts/{alert.pk}/").content.decode()
    watching = html.split('data-testid="alert-watching"', 1)[1].split("</p>", 1)[0]
    assert f'data-watching="{words}"' in watching
    assert f"Watching after the {alert.replacement}" in _text(watching)
    # The API: the alert and the cable's next step.
    api = engineer_client.get(f"/api/alerts/{alert.pk}/").json()
    assert api["watching"] == words
    cable = engineer_client.get(f"/api/cables/{label}/").json()
    assert any(f"({words})" in reason for reason in cable["next_step"]["reasons"]), cable["next_step"]
