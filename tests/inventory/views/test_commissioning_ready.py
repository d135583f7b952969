"""The commissioning report's "ready" is the cable page's "ready for production": a link whose
tests pass but whose cable has an open fault report, or an open alert of warning level and
above, is not ready on the page, in the counts or in the PDF, and says why in the cable page's
words.

Three one-segment links, every jumper passing its power-meter test (3 m: no OTDR needed)::

    [gpu-1 eth0]--J-1--[leaf-1 Ethernet1/1]    nothing open: ready
    [gpu-1 eth1]--J-2--[leaf-1 Ethernet1/2]    a technician reports a fault on J-2
    [gpu-1 eth2]--J-3--[leaf-1 Ethernet2/1]    a page alert opens on J-3's link
"""

from datetime import timedelta
from decimal import Decimal

import pypdfium2
import pytest
from django.urls import reverse
from django.utils import timezone

from inventory.core.choices import CableStatus, DeviceRole, Polarity, Verdict
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Link
from inventory.selectors.pages.commissioning import commissioning_report
from inventory.services import alerts as alert_svc
from inventory.services import testing as svc
from inventory.services.plant.fieldwork import cable_fault_report
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def hall():
    now = timezone.now()
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    cables = [
        f.jumper(f"J-{i + 1}", gpu[i], leaf[i], polarity=Polarity.B, length_m=Decimal("3")) for i in range(3)
    ]
    for c in cables:
        readings = [svc.FibreReading(fibre=i, wavelength_nm=1310, loss_db=0.3) for i in range(1, 9)]
        data = svc.OltsInput(readings=readings, tested_at=now - timedelta(hours=2))
        assert svc.cable_test_record_olts(cable=c, data=data, now=now).verdict == Verdict.PASS
    links = {c.label: Link.objects.get(active=True, segments__cable=c) for c in cables}
    assert all(lv.ready for lv in commissioning_report().links)  # every test passes
    tech = f.UserFactory(username="tina", role="technician")
    cable_fault_report(
        cable=cables[1], seen="jacket crushed at U12", status=CableStatus.FAULTY, actor=tech, now=now
    )
    alert_svc.alert_raise(
        finding=Finding(
            key=f"link_flap:link:{links['J-3'].pk}",
            rule="link_flap",
            severity="page",
            link_id=links["J-3"].pk,
            port_id=links["J-3"].b_port_id,
            headline="12 flaps in 10 minutes",
            recommendation="Re-seat both ends.",
            recommendation_code="reseat",
        ),
        now=now,
    )
    return links


def test_a_faulty_or_alerted_cable_is_not_ready_on_the_report(hall):
    report = commissioning_report()
    rows = {lv.link_id: lv for lv in report.links}
    assert rows[hall["J-1"].pk].ready
    faulty, alerted = rows[hall["J-2"].pk], rows[hall["J-3"].pk]
    assert not faulty.ready and not alerted.ready
    # the tests themselves still pass: what holds them is said apart from what the tests lack
    assert faulty.verdict == Verdict.PASS and not faulty.blockers
    assert faulty.holds == ["J-2: Fault reported: jacket crushed at U12"]
    # the cable page's words for what holds it, without the sentence it adds for a technician
    assert alerted.holds == ["J-3: Page alert open: Link flap"]
    assert report.counts == {"links": 3, "ready": 1, "blocked": 2, "fail": 0, "pmd_fail_tia_pass": 0}


def _row(html: str, label: str) -> str:
    return html.split(f'href="/c/{label}"', 1)[1].split("</tr>", 1)[0]


def test_the_page_and_the_pdf_say_so(hall, engineer_client):
    html = engineer_client.get(reverse("commissioning-report")).content.decode()
    assert ">1 ready<" in html and ">2 blocked<" in html
    assert ">ready<" in _row(html, "J-1")
    assert ">ready<" not in _row(html, "J-2") and "Fault reported: jacket crushed at U12" in _row(html, "J-2")
    assert ">ready<" not in _row(html, "J-3") and "Page alert open" in _row(html, "J-3")
    pdf = pypdfium2.PdfDocument(engineer_client.get(reverse("commissioning-report-pdf")).content)
    text = " ".join("".join(p.get_textpage().get_text_range() for p in pdf).split())
    assert "1 ready, 2 blocked" in text
    assert "J-2: Fault reported: jacket crushed at U12" in text and "J-3: Page alert open" in text
    # "ready" in the counts and in J-1's row: nowhere else
    assert text.count("ready") == 2


def test_a_qualified_dac_link_reads_as_qualified_not_as_unknown(engineer_client):
    """A DAC has no fibre: no TIA budget and no PMD channel apply. Its row says so and gives the
    verdict it is judged by (its link qualification), on the page and in the PDF, instead of two
    "unknown" verdicts coloured like its passing row."""
    from tests.inventory.testing_scenes import dac_link, qualify

    assert qualify(dac_link(), when=timezone.now()).verdict == Verdict.PASS
    [lv] = commissioning_report().links
    assert lv.qualified and lv.ready and lv.as_dict()["qualified"] is True

    row = _row(engineer_client.get(reverse("commissioning-report")).content.decode(), "D-1")
    assert ">no fibre<" in row and 'link qualification <span class="verdict v-pass">pass<' in row
    assert "unknown" not in row and ">ready<" in row
    pdf = pypdfium2.PdfDocument(engineer_client.get(reverse("commissioning-report-pdf")).content)
    text = " ".join("".join(p.get_textpage().get_text_range() for p in pdf).split())
    assert "no fibre" in text and "link qualification pass" in text and "unknown" not in text


def test_a_tested_planned_cable_is_offered_production_and_once_in_it_says_its_tests_are_complete(tech_client):
    """A cable recorded (planned) and then qualified is in place: its page said "This cable's
    tests are complete, but it is not ready for production: " with no reason and offered nothing.
    It is ready, and says so; once the technician marks it in production, the Tests card says its
    tests are complete, not that it is ready for a state the badge says it is already in."""
    from tests.inventory.testing_scenes import dac_link, qualify

    qualify(dac_link(), when=timezone.now())
    before = tech_client.get("/c/D-1").content.decode()
    assert "Recorded as planned, but every test passes and no alert is open: ready for production." in before
    assert "Tests complete: ready for production." in before and "Mark in production" in before
    assert "not ready for production" not in before

    tech_client.post("/c/D-1/status", {"status": CableStatus.IN_PRODUCTION})
    page = tech_client.get("/c/D-1").content.decode()
    assert "In production: every test passes." in page
    assert '<p class="gate gate-ok">Tests complete.</p>' in page
    assert "ready for production" not in page and "Mark in production" not in page
