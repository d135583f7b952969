"""Alerts follow the physical truth: a replaced cable or a swapped module takes the open alerts of
its links along, "replaced, watching", until the rule's clean window passes clean (resolved) or the
condition shows again (back, naming the new part).

Plant (``conftest.plant``)::

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]        the link that flaps
    [gpu-0001 eth1]--J-100--[pp-a]==T-100==[pp-b]--J-101--[leaf-01 Ethernet2/1]
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertState, CableStatus, Severity
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Cable, Link
from inventory.services import alerts as svc
from inventory.services.plant import transceivers as xcvr_services
from tests import factories as f

pytestmark = pytest.mark.django_db


def _flap(link: Link, severity: str = Severity.PAGE) -> Finding:
    return Finding(
        key=f"link_flap:link:{link.pk}",
        rule="link_flap",
        severity=severity,
        link_id=link.pk,
        port_id=link.a_port_id,
        headline="7 link-down events in 15 minutes",
        recommendation="Swap the module at the flapping end.",
        recommendation_code="swap_module",
        ends={"a": {"link_down_events": 7.0}},
    )


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _flapping(plant, now):
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    alert, opened = svc.alert_raise(finding=_flap(link), now=now)
    assert opened and alert.cable.label == "J-102"
    return alert


def test_after_a_replace_the_alert_is_on_the_new_cable_and_the_old_page_says_where_it_went(
    plant, engineer_client
):
    site_tech_client = engineer_client  # replacing needs a new cable record: an engineer's action
    now = timezone.now() - timedelta(minutes=2)
    alert = _flapping(plant, now)

    r = site_tech_client.post("/c/J-102/replace", {"new_label": "R-102", "reason": "flapping"})
    assert r.status_code == 302 and r["Location"] == "/c/R-102"

    alert.refresh_from_db()
    new = Cable.objects.get(label="R-102")
    new_link = Link.objects.get(active=True, segments__cable=new)
    assert alert.state == AlertState.OPEN and alert.cable == new and alert.link == new_link
    assert alert.key == f"link_flap:link:{new_link.pk}"  # the next evaluation updates it, not a second one
    assert list(alert.cables.values_list("label", flat=True)) == ["R-102"]
    assert alert.watching_since is not None and alert.moved_from.label == "J-102"
    assert alert.updated_at == now  # a move is not a sighting: "last seen" stays

    page = site_tech_client.get("/c/R-102").content.decode()
    summary = page.split('aria-label="Status"', 1)[1].split("</section>", 1)[0]
    assert 'data-state="alert"' in summary and "replaced, watching" in _text(summary).lower()
    assert 'value="in_production"' not in summary  # never offered while the page alert is open
    assert f'href="/alerts/{alert.pk}/"' in page and "No open alerts on this cable" not in page

    old = site_tech_client.get("/c/J-102").content.decode()
    moved = old.split('data-testid="moved-alerts"', 1)[1].split("</p>", 1)[0]
    assert f"/alerts/{alert.pk}/" in moved and 'href="/c/R-102"' in moved and "watching" in moved

    # Home and the rack page list it on the new cable: no orphan naming the retired one.
    for url in ("/", "/r/A01"):
        html = site_tech_client.get(url).content.decode()
        row = html.split(f'href="/alerts/{alert.pk}/"', 1)[1].split("</li>", 1)[0]
        assert "R-102" in row and "J-102" not in row, url


def test_a_watching_alert_resolves_after_the_rules_clean_window_or_comes_back_naming_the_new_part(
    plant, engineer_client
):
    site_tech_client = engineer_client
    t0 = timezone.now() - timedelta(hours=2)
    alert = _flapping(plant, t0)
    site_tech_client.post("/c/J-102/replace", {"new_label": "R-102"})
    alert.refresh_from_db()
    alert.watching_since = t0  # the replacement, at t0
    alert.save(update_fields=["watching_since"])
    link = Link.objects.get(active=True, segments__cable__label="R-102")
    ports = {link.a_port_id, link.b_port_id}

    # Inside the window the old flaps still count: neither resolved nor "back".
    svc.alerts_apply(findings=[], holding=set(), reporting_port_ids=ports, now=t0 + timedelta(minutes=5))
    svc.alerts_apply(
        findings=[_flap(link)], holding=set(), reporting_port_ids=ports, now=t0 + timedelta(minutes=6)
    )
    alert.refresh_from_db()
    assert alert.state == AlertState.OPEN and alert.watching_since is not None and alert.returned_at is None

    # The flaps go on past the window: the new cable did not fix it, and the alert says so.
    back = t0 + timedelta(minutes=20)
    svc.alerts_apply(findings=[_flap(link)], holding=set(), reporting_port_ids=ports, now=back)
    alert.refresh_from_db()
    assert alert.watching_since is None and alert.returned_at == back
    assert alert.summary.startswith("Back after the cable replacement (J-102 by R-102)")

    # Another replacement, and this time the window passes clean: resolved.
    site_tech_client.post("/c/R-102/replace", {"new_label": "S-102"})
    alert.refresh_from_db()
    assert alert.cable.label == "S-102" and alert.watching_since is not None
    start = alert.watching_since
    link = Link.objects.get(active=True, segments__cable__label="S-102")
    ports = {link.a_port_id, link.b_port_id}
    svc.alerts_apply(findings=[], holding=set(), reporting_port_ids=ports, now=start + timedelta(minutes=10))
    alert.refresh_from_db()
    assert alert.state == AlertState.OPEN  # the window (15 minutes for link_flap) has not passed
    svc.alerts_apply(findings=[], holding=set(), reporting_port_ids=ports, now=start + timedelta(minutes=16))
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED and alert.watching_since is None


def test_a_module_swap_puts_the_links_alerts_on_watch_naming_the_modules(plant):
    now = timezone.now()
    alert = _flapping(plant, now)
    cage = plant["gpu"][0].cage
    old_serial = cage.transceiver.serial
    spare = f.module(cage.transceiver.model, serial="SPARE-1")
    xcvr_services.transceiver_swap(cage=cage, new=spare, old_failed=True, now=now)
    alert.refresh_from_db()
    assert alert.watching_since == now
    assert (
        alert.replacement == f"module swap at End A of J-102 (gpu-0001 {cage.name}: {old_serial} by SPARE-1)"
    )
    assert alert.watching == "module swapped at End A of J-102, watching"


def test_mark_in_production_is_refused_while_an_alert_is_open_and_an_engineer_may_override(
    plant, site_tech_client, engineer_client
):
    """J-102 passes its gate (a fresh power-meter test), but its link pages."""
    from tests.inventory.views.test_cable_page_evidence import olts

    cable = plant["cables"]["J-102"]
    cable.length_m = 3
    cable.status = CableStatus.DEGRADED
    cable._change_reason = "test setup"
    cable.save()
    olts(cable, 0.4, 8, timezone.now())
    alert = _flapping(plant, timezone.now())

    page = site_tech_client.get("/c/J-102").content.decode()
    summary = page.split('aria-label="Status"', 1)[1].split("</section>", 1)[0]
    assert 'data-step="alert"' in summary and f'href="/alerts/{alert.pk}/"' in summary
    assert "Swap the module at the flapping end." in summary
    assert 'value="in_production"' not in summary  # a technician gets no button and no override

    r = site_tech_client.post("/c/J-102/status", {"status": "in_production"}, follow=True)
    assert "cannot go into production while an alert is open" in _text(r.content.decode())
    assert Cable.objects.get(label="J-102").status == CableStatus.DEGRADED
    r = site_tech_client.post("/c/J-102/status", {"status": "in_production", "override_reason": "trust me"})
    assert Cable.objects.get(label="J-102").status == CableStatus.DEGRADED  # not theirs to override

    page = engineer_client.get("/c/J-102").content.decode()
    assert 'data-testid="override"' in page and 'name="override_reason"' in page
    engineer_client.post(
        "/c/J-102/status", {"status": "in_production", "override_reason": "flaps were the leaf reboot"}
    )
    cable.refresh_from_db()
    assert cable.status == CableStatus.IN_PRODUCTION
    note = cable.field_notes.get(text__startswith="Put in production over open alert")
    assert f"#{alert.pk} page link flap" in note.text and "flaps were the leaf reboot" in note.text
    assert note.actor.username == "eng"
