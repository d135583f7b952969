"""The cable page says what the evidence says: the recorded status against the tests and the
links' verdicts, the one next step, every action once, the journal, and a friendly unknown label.

Plant (``conftest.plant``)::

    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth0]--J-102 (in production, retest overdue)--[leaf-01 Ethernet1/1]
"""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus, FieldNoteKind, Severity
from inventory.models import Alert, Cable, FieldNote
from inventory.selectors.decision import cable_decisions
from inventory.services import testing as svc
from inventory.services.demo.seed import demo_seed
from inventory.services.plant import fieldwork
from tests.inventory.testing_scenes import dac_link, os2_jumper
from tests.inventory.views.conftest import without_name_spans

pytestmark = pytest.mark.django_db

ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
RAW_CODES = ("in_production", "SMF_OS2", "link_flap", "fec_tail", "pre_fec_ber", "reseated_cleaned")


def olts(cable, loss, n, when):
    readings = [svc.FibreReading(fibre=i, wavelength_nm=1310, loss_db=loss) for i in range(1, n + 1)]
    return svc.cable_test_record_olts(
        cable=cable, data=svc.OltsInput(readings=readings, tested_at=when), now=when
    )


def _set_status(cable: Cable, status: str) -> None:
    cable.status = status
    cable._change_reason = "test setup"
    cable.save()


def _main(html: str) -> str:
    return without_name_spans(html.split("<main>", 1)[1].split("</main>", 1)[0])


def test_in_production_while_its_link_fails_the_pmd_is_flagged_and_degraded_is_offered(
    plant, site_tech_client
):
    """Like C000322: every segment passes TIA, the channel loses 3.30 of 3.00 dB."""
    now = timezone.now()
    cables = plant["cables"]
    for label, n in (("J-100", 8), ("T-100", 24), ("J-101", 8)):
        olts(cables[label], 1.1, n, now)
    _set_status(cables["J-100"], CableStatus.IN_PRODUCTION)
    page = _main(site_tech_client.get("/c/J-100").content.decode())
    assert 'data-testid="evidence-flag">Tests fail<' in page
    assert "Recorded as in production, but it fails" in page
    # the link by its two ends, the figure and the limit
    channel = "link gpu-0001:eth1 \u2194 leaf-01:Ethernet2/1 channel: 3.30 dB, over its 3.00 dB 400GBASE-DR4 channel limit"
    assert channel in page
    # the desk list's decisions (links read as bare facts, the ends named only where they fail) say the same
    decision = cable_decisions(cables=[Cable.objects.get(label="J-100")])[cables["J-100"].pk]
    assert [f.text for f in decision.fails] == [channel + " (worst segment J-100, 1.10 dB)"]
    assert 'name="status" value="degraded"' in page and ">Mark degraded<" in page
    r = site_tech_client.post("/c/J-100/status", {"status": "degraded"})
    assert r.status_code == 302
    assert Cable.objects.get(label="J-100").status == CableStatus.DEGRADED


def test_a_passing_retest_after_degraded_offers_mark_in_production_through_the_gate(engineer_client):
    cable = os2_jumper()  # 3 m: below the OTDR dead-zone limit, a power-meter test is the gate
    fieldwork.cable_fault_report(cable=cable, seen="link light off", status=CableStatus.DEGRADED)
    page = _main(engineer_client.get("/c/J-1").content.decode())
    assert "Single-mode OS2 · Direct (point to point) · 3 m" in page  # kind, role and length in words
    assert ">Record the power-meter test<" in page  # the gate lacks it: that is the next step
    assert page.count("/c/J-1/test/power-meter") == 1  # offered once
    assert 'data-testid="journal-open"' in page and "link light off" in page  # the open fault, on top

    olts(cable, 0.4, 8, timezone.now())
    page = _main(engineer_client.get("/c/J-1").content.decode())
    assert "every test passes and no alert is open: ready for production" in page
    assert 'name="status" value="in_production"' in page and ">Mark in production<" in page
    r = engineer_client.post("/c/J-1/status", {"status": "in_production"}, follow=True)
    assert "J-1 is now in production" in r.content.decode()
    assert Cable.objects.get(label="J-1").status == CableStatus.IN_PRODUCTION
    fault = FieldNote.objects.get(cable=cable, kind=FieldNoteKind.FAULT)
    assert fault.closed_at is not None and "production gate" in fault.close_reason
    assert 'data-testid="journal-open"' not in _main(r.content.decode())


def test_the_gate_still_decides_when_mark_in_production_is_posted(engineer_client):
    cable = os2_jumper()
    _set_status(cable, CableStatus.DEGRADED)
    r = engineer_client.post("/c/J-1/status", {"status": "in_production"}, follow=True)
    assert "cannot go into production: it needs a power-meter (OLTS) test" in r.content.decode()
    assert Cable.objects.get(label="J-1").status == CableStatus.DEGRADED


def test_a_viewer_is_shown_the_disagreement_but_offered_no_status_button(plant, viewer_client):
    now = timezone.now()
    for label, n in (("J-100", 8), ("T-100", 24), ("J-101", 8)):
        olts(plant["cables"][label], 1.1, n, now)
    _set_status(plant["cables"]["J-100"], CableStatus.IN_PRODUCTION)
    page = _main(viewer_client.get("/c/J-100").content.decode())
    assert "Recorded as in production, but it fails" in page
    assert 'name="status"' not in page and "Report a fault" not in page
    assert viewer_client.post("/c/J-100/status", {"status": "degraded"}).status_code == 403


def test_a_dac_shows_its_qualification_in_words_and_offers_no_optical_test(engineer_client):
    dac_link()
    page = re.sub(r"<[^>]+>", " ", _main(engineer_client.get("/c/D-1").content.decode()))
    assert "Direct-attach copper (passive)" in page
    html = engineer_client.get("/c/D-1").content.decode()
    assert "/test/power-meter" not in html and "/test/otdr" not in html and "/inspect" not in html
    assert "unknown" not in page.lower().replace("not evaluated", "")
    assert "a link qualification" in page  # what the gate lacks, in words
    assert "TIA" not in page and "link qualification Not evaluated" in " ".join(page.split())
    assert "serial DAC-A1" in " ".join(page.split())


def test_the_most_severe_open_alert_leads_with_its_recommendation(plant, tech_client):
    cable = plant["cables"]["J-102"]
    t = timezone.now() - timedelta(hours=2)
    for sev, rule, rec in (
        (Severity.NOTIFY, "fec_degradation", "Clean the connectors."),
        (Severity.PAGE, "link_flap", "Re-seat both modules and the cable ends."),
        (Severity.WARNING, "fec_tail", "Watch the tail."),
    ):
        Alert.objects.create(
            key=f"{rule}-1",
            rule=rule,
            severity=sev,
            cable=cable,
            opened_at=t,
            updated_at=t,
            summary=f"{rec.split()[0]} seen",
            recommendation=rec,
        )
    page = _main(tech_client.get("/c/J-102").content.decode())
    top = page.split('data-testid="top-alert"', 1)[1].split("</section>", 1)[0]
    assert "Page</strong> · Link flap" in top and "Re-seat both modules" in top and "2 more below" in top
    assert page.index('data-testid="top-alert"') < page.index('aria-label="Actions"')
    for raw in RAW_CODES:
        assert raw not in re.sub(r"<[^>]+>", " ", page), raw
    assert not ISO_MOMENT.search(re.sub(r"<[^>]+>", " ", page))


def test_every_action_once_and_history_in_words_newest_first(plant, site_tech_client):
    cable = plant["cables"]["J-102"]
    fieldwork.cable_serviced(cable=cable, kind=FieldNoteKind.RESEATED_CLEANED, text="both ends")
    fieldwork.cable_fault_report(cable=cable, seen="jacket crushed at U12", status=CableStatus.FAULTY)
    html = site_tech_client.get("/c/J-102").content.decode()
    page = _main(html)
    for href in ("/c/J-102/test/power-meter", "/c/J-102/test/otdr", "/c/J-102/inspect", "/c/J-102/fault"):
        assert page.count(f'href="{href}"') == 1, href
    text = re.sub(r"<[^>]+>", " ", page.split('id="history"', 1)[1])
    assert "Status: In production → Faulty" in text
    assert text.index("fault reported") < text.index("re-seated and cleaned") < text.index("created")
    assert not ISO_MOMENT.search(text) and "in_production" not in text


def test_unknown_label_is_a_friendly_404_even_with_debug(settings, engineer_client, viewer_client):
    settings.DEBUG = True
    r = engineer_client.get("/c/C999999")
    assert r.status_code == 404
    html = r.content.decode()
    assert "No cable" in html and "C999999" in html and "URLconf" not in html
    assert 'name="viewport"' in html and 'action="/search/"' in html
    assert 'href="/cables/new?label=C999999"' in html  # engineers may record it
    form = engineer_client.get("/cables/new?label=C999999").content.decode()
    assert 'value="C999999"' in form
    assert "/cables/new" not in viewer_client.get("/c/C999999").content.decode()


def test_journal_notes_on_a_rack_a_module_and_a_device_show_while_open(plant, site_tech_client):
    rack = plant["racks"][0]
    xcvr = plant["gpu"][0].cage.transceiver
    device = plant["gpu"][0].device
    notes = (
        ("rack", rack.name, "door hinge loose"),
        ("module", xcvr.pk, "dust cap missing"),
        ("device", device.pk, "fan noisy"),
    )
    for kind, key, text in notes:
        r = site_tech_client.post(f"/journal/{kind}/{key}/add", {"kind": "note", "text": text})
        assert r.status_code == 302, r.content
    note = FieldNote.objects.get(rack=rack)
    assert note.actor.username == "site-tech" and note.is_open
    rack_page = site_tech_client.get(f"/r/{rack.name}").content.decode()
    assert "door hinge loose" in rack_page and f'action="/journal/{note.pk}/close"' in rack_page
    assert "dust cap missing" in site_tech_client.get(f"/t/{xcvr.pk}").content.decode()
    assert FieldNote.objects.get(device=device).text == "fan noisy"
    site_tech_client.post(f"/journal/{note.pk}/close", {"next": f"/r/{rack.name}"})
    note.refresh_from_db()
    assert note.closed_at is not None and note.closed_by.username == "site-tech"
    assert (
        f'action="/journal/{note.pk}/close"' not in site_tech_client.get(f"/r/{rack.name}").content.decode()
    )


def test_a_journal_entry_needs_text_and_a_known_target(plant, site_tech_client):
    """An empty note answered Django's bare "This field is required.": it says what to give, in
    the words of the fault and swap forms."""
    r = site_tech_client.post(f"/journal/rack/{plant['racks'][0].name}/add", {"kind": "note", "text": "  "})
    html = r.content.decode().replace("&#x27;", "'")
    assert r.status_code == 400 and "This field is required" not in html
    assert r.context["form"].errors == {
        "text": [
            "Write what you saw or did (a loose door hinge, a cleaned connector, where): it goes on the record."
        ]
    }
    assert "Write what you saw or did (a loose door hinge, a cleaned connector, where)" in html
    assert (
        site_tech_client.post("/journal/rack/NO-SUCH/add", {"kind": "note", "text": "x"}).status_code == 404
    )
    assert FieldNote.objects.count() == 0


def test_the_demo_writes_no_history_dated_after_now():
    """Its "created" entries once sat hours in the future (09:00 on ``--as-of`` before 09:00)."""
    as_of = timezone.localdate() + timedelta(days=1)  # 09:00 that day is always after now
    demo_seed(gpus=8, seed=5, as_of=as_of)
    after = datetime.now(tz=UTC)
    assert Cable.history.count() > 0
    assert not Cable.history.filter(history_date__gt=after).exists()
    assert not FieldNote.objects.filter(at__gt=after).exists()


def test_a_cable_page_for_a_trunk_names_its_links(plant, tech_client):
    page = _main(tech_client.get("/c/T-100").content.decode())
    assert "Trunk" in page and 'data-testid="end-A"' in page and 'data-testid="end-B"' in page
    assert "pp-a" in page and "pp-b" in page


def test_out_of_band_copper_has_a_next_step_though_no_test_gate_applies(engineer_client):
    """A Cat6A management cable has no test to wait for: installed, its page says it is ready and
    offers "Mark in production" (no "Tests pass" flag: nothing was tested); in production, it says
    so; marked faulty, it offers the replacement. The page never leaves a technician with no
    headline and no step."""
    from decimal import Decimal

    from inventory.core.choices import CableKind, ConnectorType
    from inventory.models import Port
    from inventory.services.plant import cables as cable_services
    from tests import factories as f

    bmc, mgmt = f.free_port_devices(["gpu-7", "mgmt-7"], 1)  # an RJ45 jack each, no module cage
    cable_services.cable_install(
        label="M-1",
        kind=CableKind.CAT6A,
        a=cable_services.EndSpec(port=Port.objects.get(device=bmc), connector_type=ConnectorType.RJ45),
        b=[cable_services.EndSpec(port=Port.objects.get(device=mgmt), connector_type=ConnectorType.RJ45)],
        length_m=Decimal("2"),
    )
    _set_status(Cable.objects.get(label="M-1"), CableStatus.INSTALLED)
    page = _main(engineer_client.get("/c/M-1").content.decode())
    assert "Recorded as installed; Cat6A copper has no test gate: ready for production." in page
    assert 'name="status" value="in_production"' in page and ">Mark in production<" in page
    assert 'data-testid="evidence-flag"' not in page
    assert "/c/M-1/swap" not in page  # RJ45 jacks hold no module

    r = engineer_client.post("/c/M-1/status", {"status": "in_production"}, follow=True)
    assert "M-1 is now in production" in r.content.decode()
    page = _main(engineer_client.get("/c/M-1").content.decode())
    assert "In production; Cat6A copper has no test gate." in page
    assert ">Mark in production<" not in page

    _set_status(Cable.objects.get(label="M-1"), CableStatus.FAULTY)
    page = _main(engineer_client.get("/c/M-1").content.decode())
    assert "Recorded as faulty; Cat6A copper has no test gate to prove it mended." in page
    assert ">Replace the cable<" in page
