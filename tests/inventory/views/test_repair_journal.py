"""What was done to a cable is in its journal, wherever it was recorded, and a re-seat recorded
on the cable page reaches the open alert it repairs.

Plant (``conftest.plant``)::

    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]        a Page "Link flap" alert is open on it

* A repair recorded on the alert page writes one entry in J-102's "Journal and history": what,
  where, for which alert, the note, by whom.
* A drain and a restore of the link write one entry on each cable of its path.
* The cable page's "Re-seated / cleaned" form names the open alert and offers its repair form;
  recorded there, the re-seat is the alert's repair too (on watch, in its repairs), with one
  journal entry.
* The alert page's note comes before the action buttons, and Enter in it records nothing.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import Severity
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import FieldNote, Link
from inventory.services import alerts as svc
from tests.inventory.views.test_alerts_follow_replacement import _flap

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _journal(client, label: str) -> str:
    """The words of the cable page's "Journal and history", as a technician reads them."""
    html = client.get(f"/c/{label}").content.decode()
    return _text(html.split('id="history"', 1)[1].split("</section>", 1)[0])


@pytest.fixture
def flapping(plant):
    link = Link.objects.get(active=True, segments__cable__label="J-102")
    alert, opened = svc.alert_raise(finding=_flap(link), now=timezone.now() - timedelta(minutes=2))
    assert opened and alert.severity == Severity.PAGE
    return alert


def test_a_repair_recorded_on_the_alert_is_in_the_cables_journal(flapping, tech_client):
    alert = flapping
    r = tech_client.post(
        f"/alerts/{alert.pk}/repairs",
        {"end": "A:J-102", "action": "reseat", "note": "latch was loose"},
        follow=True,
    )
    assert "Recorded: Re-seat (End A of J-102)" in _text(r.content.decode())

    journal = _journal(tech_client, "J-102")
    assert f"tech re-seated re-seated at End A of J-102 for alert #{alert.pk}: latch was loose" in journal
    assert FieldNote.objects.filter(cable__label="J-102").count() == 1

    # A double tap is the same repair: no second entry.
    tech_client.post(f"/alerts/{alert.pk}/repairs", {"end": "A:J-102", "action": "reseat"})
    assert _journal(tech_client, "J-102").count(f"for alert #{alert.pk}") == 1


def test_a_drain_and_a_restore_are_in_the_journal_of_the_links_cables(flapping, tech_client):
    alert = flapping
    r = tech_client.post(f"/alerts/{alert.pk}/drain", {"hours": "2"}, follow=True)
    assert "Drained: the link is in maintenance until" in _text(r.content.decode())
    r = tech_client.post(f"/alerts/{alert.pk}/restore", follow=True)
    assert r.status_code == 200

    journal = _journal(tech_client, "J-102")
    link = alert.link
    words = f"Link {link.a_port.device.name}:{link.a_port.name} \u2194 {link.b_port.device.name}:{link.b_port.name}"
    drained = re.search(
        rf"tech note {re.escape(words)} drained until (\d\d:\d\d|\d+ \w+ \d\d:\d\d) UTC for alert #{alert.pk} \(link flap\)",
        journal,
    )
    assert drained, journal
    assert re.search(
        rf"tech note {re.escape(words)} restored \(drained since [^)]+ UTC\) for alert #{alert.pk} \(link flap\)",
        journal,
    ), journal


def test_the_serviced_form_names_the_open_alert_and_records_the_reseat_on_it(flapping, tech_client):
    alert = flapping
    page = tech_client.get("/c/J-102/serviced").content.decode()
    box = _text(page.split('data-testid="service-alert"', 1)[1].split("</section>", 1)[0])
    assert f"Page alert #{alert.pk} · Link flap is open on this cable's link" in box
    assert f'href="/alerts/{alert.pk}/#repair"' in page
    assert f"Recorded here instead, it is recorded on alert #{alert.pk} too" in box
    assert f"Which end? (recorded on alert #{alert.pk} too)" in _text(page)

    r = tech_client.post(
        "/c/J-102/serviced", {"kind": "reseated", "end": "B", "text": "leaf end was half out"}, follow=True
    )
    said = _text(r.content.decode())
    assert (
        f"Recorded: re-seated, as the repair of alert #{alert.pk} (Link flap): Re-seat, End B of J-102. "
        "The alert watches the telemetry" in said
    ), said

    # The alert heard of it: on watch after the re-seat, with the repair in its table.
    alert_page = _text(tech_client.get(f"/alerts/{alert.pk}/").content.decode())
    assert "Watching after the re-seat at End B of J-102" in alert_page
    assert "Re-seat, End B of J-102 leaf end was half out" in alert_page
    repairs = tech_client.get(f"/api/alerts/{alert.pk}/repairs/").json()["repairs"]
    assert [(x["action"], x["end"], x["cable"]) for x in repairs] == [("reseat", "B", "J-102")]

    # One journal entry on the cable, naming the alert.
    journal = _journal(tech_client, "J-102")
    assert (
        f"tech re-seated re-seated at End B of J-102 for alert #{alert.pk}: leaf end was half out" in journal
    )
    assert FieldNote.objects.filter(cable__label="J-102").count() == 1


def test_cleaned_and_reseated_on_the_cable_page_is_a_cleaning_of_the_alert(flapping, tech_client):
    alert = flapping
    tech_client.post("/c/J-102/serviced", {"kind": "reseated_cleaned", "end": "na"})
    repairs = tech_client.get(f"/api/alerts/{alert.pk}/repairs/").json()["repairs"]
    assert [(x["action"], x["end"], x["cable"]) for x in repairs] == [("clean", "na", "J-102")]
    assert f"tech re-seated and cleaned re-seated and cleaned for alert #{alert.pk}" in _journal(
        tech_client, "J-102"
    )


def test_the_serviced_form_without_an_open_alert_asks_no_end(plant, tech_client):
    page = tech_client.get("/c/J-102/serviced").content.decode()
    assert 'data-testid="service-alert"' not in page and 'name="end"' not in page
    r = tech_client.post("/c/J-102/serviced", {"kind": "cleaned"}, follow=True)
    assert "Recorded: cleaned." in _text(r.content.decode())
    assert "tech cleaned" in _journal(tech_client, "J-102")


def test_the_repair_note_comes_before_the_action_buttons_and_enter_submits_nothing(flapping, tech_client):
    form = tech_client.get(f"/alerts/{flapping.pk}/").content.decode()
    form = form.split('data-testid="repair-form"', 1)[1].split("</form>", 1)[0]
    assert form.index('name="note"') < form.index('name="action"')
    assert re.search(r'<textarea name="note"', form)  # Enter starts a new line
    # The form's default button (the one Enter in a field would press) is disabled.
    first_button = re.search(r"<button[^>]*>", form).group(0)
    assert "disabled" in first_button and 'name="action"' not in first_button


def _fec_tail(link: Link) -> Finding:
    return Finding(
        key=f"fec_tail:link:{link.pk}",
        rule="fec_tail",
        severity=Severity.WARNING,
        link_id=link.pk,
        port_id=link.b_port_id,
        headline="FEC codewords in the high bins",
        recommendation="Clean the connectors.",
        recommendation_code="clean",
        ends={"b": {"fec_tail": 1.0}},
    )


def test_the_serviced_form_with_two_open_alerts_records_the_cleaning_on_both_and_says_so(
    flapping, tech_client
):
    """A Page flap and a Warning FEC tail on J-102's link: cleaning End B is a repair of both,
    each watches after it, the page names both before and after, and the journal says it once."""
    flap = flapping
    link = flap.link
    tail, opened = svc.alert_raise(finding=_fec_tail(link), now=timezone.now() - timedelta(minutes=1))
    assert opened and tail.pk != flap.pk
    page = _text(tech_client.get("/c/J-102/serviced").content.decode())
    assert (
        f"Page alert #{flap.pk} · Link flap" in page
        and f"Warning alert #{tail.pk} · FEC histogram tail" in page
    )
    assert f"Which end? (recorded on alerts #{flap.pk} and #{tail.pk} too)" in page

    r = tech_client.post("/c/J-102/serviced", {"kind": "cleaned", "end": "B", "text": "dusty"}, follow=True)
    said = _text(r.content.decode())
    assert (
        f"Recorded: cleaned, as the repair of alerts #{flap.pk} (Link flap) and #{tail.pk} (FEC histogram tail): "
        "Clean the connectors, End B of J-102." in said
    ), said
    for a in (flap, tail):
        repairs = tech_client.get(f"/api/alerts/{a.pk}/repairs/").json()["repairs"]
        assert [(x["action"], x["end"], x["cable"]) for x in repairs] == [("clean", "B", "J-102")]
        assert "Watching after the cleaning at End B of J-102" in _text(
            tech_client.get(f"/alerts/{a.pk}/").content.decode()
        )
    journal = _journal(tech_client, "J-102")
    assert f"tech cleaned cleaned at End B of J-102 for alerts #{flap.pk} and #{tail.pk}: dusty" in journal
    assert FieldNote.objects.filter(cable__label="J-102").count() == 1
