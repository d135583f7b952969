"""The pages a QR scan opens, on a 360 x 740 phone in real Chromium: the cable page (a jumper with
alerts and an open fault, a trunk, a DAC), the unknown-label page and the labels page.

On each: no sideways scroll, no text under 12 CSS px, every tap target at least 44 px (a link
inside a sentence excepted), no raw code or ISO timestamp in the visible text. On the cable
page, both ends and the most severe open alert are on the first screen.
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus, Severity
from inventory.models import Alert, GpuNicMap, Link
from inventory.services.collectives import RankSpec, job_register
from inventory.services.plant import fieldwork
from tests import factories as f
from tests.inventory.testing_scenes import dac_link

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIRST_SCREEN = 740
ISO_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
RAW_CODE = re.compile(
    r"\b(in_production|SMF_OS2|MMF_OM[345]|link_flap|fec_\w+|rx_power_drift|pre_fec_ber|reseated_cleaned)\b"
)

# What a phone user would trip over, measured in the page itself.
AUDIT_JS = """() => {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
  };
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || !visible(el)) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    if (size < 12) small.push([el.tagName, node.textContent.trim().slice(0, 40), size]);
  }
  const targets = [];
  for (const el of document.querySelectorAll('a, button, input:not([type=hidden]), select, textarea, summary')) {
    let box = el;
    if (el.type === 'radio' || el.type === 'checkbox') box = el.closest('label') || el;
    if (!visible(box)) continue;
    const cs = getComputedStyle(el);
    const parentText = (el.parentElement ? el.parentElement.textContent : '').trim();
    if (cs.display === 'inline' && parentText.length > el.textContent.trim().length) continue;  // in a sentence
    const r = box.getBoundingClientRect();
    if (r.height < 44 || r.width < 44)
      targets.push([el.tagName, (el.textContent || el.name || '').trim().slice(0, 40), Math.round(r.width), Math.round(r.height)]);
  }
  return {
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    small, targets, text: document.body.innerText,
  };
}"""


def audit(page) -> dict:
    found = page.evaluate(AUDIT_JS)
    assert found["overflow"] <= 0, f"{page.url}: {found['overflow']} px of sideways scroll"
    assert not found["small"], f"{page.url}: text under 12 px: {found['small'][:5]}"
    assert not found["targets"], f"{page.url}: tap targets under 44 px: {found['targets'][:5]}"
    assert not RAW_CODE.search(found["text"]), f"{page.url}: raw code {RAW_CODE.search(found['text'])[0]!r}"
    assert not ISO_MOMENT.search(found["text"]), (
        f"{page.url}: ISO timestamp {ISO_MOMENT.search(found['text'])[0]}"
    )
    return found


def bottom(page, test_id: str) -> float:
    return page.get_by_test_id(test_id).evaluate("el => el.getBoundingClientRect().bottom + window.scrollY")


@pytest.fixture
def phone740(browser):
    context = browser.new_context(
        viewport={"width": 360, "height": FIRST_SCREEN}, device_scale_factor=2, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def log_in(page, base: str, username: str) -> None:
    page.goto(base + "/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw-for-tests-1")
    page.click("button[type=submit]")
    page.wait_for_url(base + "/")


def test_cable_page_first_screen_on_a_phone(live_server, plant, phone740, artifacts):
    """A jumper in production with three open alerts and an open fault: both ends and the
    page-level alert with its recommendation fit the first 740 px."""
    f.UserFactory(username="walker", role="technician")
    cable = plant["cables"]["J-100"]
    t = timezone.now() - timedelta(hours=3)
    for sev, rule in (
        (Severity.NOTIFY, "fec_degradation"),
        (Severity.PAGE, "link_flap"),
        (Severity.WARNING, "fec_tail"),
    ):
        Alert.objects.create(
            key=f"{rule}-e2e",
            rule=rule,
            severity=sev,
            cable=cable,
            opened_at=t,
            updated_at=t,
            summary="Seen at the A end receiver",
            recommendation="Re-seat both modules and the cable ends, then clean the connectors.",
        )
    fieldwork.cable_fault_report(cable=cable, seen="jacket pinched at U12", status=CableStatus.DEGRADED)
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-100")
    phone740.screenshot(path=str(artifacts / "f1-cable-phone.png"))
    phone740.screenshot(path=str(artifacts / "f1-cable-phone-full.png"), full_page=True)
    audit(phone740)
    for test_id in ("end-A", "end-B", "top-alert", "cable-status"):
        assert bottom(phone740, test_id) <= FIRST_SCREEN, test_id
    top = phone740.get_by_test_id("top-alert").inner_text()
    assert "Page" in top and "Link flap" in top and "Re-seat both modules" in top
    assert "OSFP1" in phone740.get_by_test_id("end-A").inner_text()  # the cage, then the port
    assert "eth1" in phone740.get_by_test_id("end-A").inner_text()


def test_trunk_and_dac_pages_on_a_phone(live_server, plant, phone740, artifacts):
    f.UserFactory(username="walker", role="technician")
    dac_link()
    log_in(phone740, live_server.url, "walker")
    for label in ("T-100", "D-1"):
        phone740.goto(f"{live_server.url}/c/{label}")
        text = audit(phone740)["text"]
        assert bottom(phone740, "end-A") <= FIRST_SCREEN and bottom(phone740, "end-B") <= FIRST_SCREEN
        phone740.screenshot(path=str(artifacts / f"f1-{label}-phone-full.png"), full_page=True)
    assert "Direct-attach copper (passive)" in text and "Record the power-meter test" not in text


def test_unknown_label_and_labels_page_on_a_phone(live_server, plant, phone740, settings, artifacts):
    settings.DEBUG = True  # the friendly page is a handled response, not Django's technical 404
    f.UserFactory(username="desk", role="engineer")
    log_in(phone740, live_server.url, "desk")
    response = phone740.goto(live_server.url + "/c/C999999")
    assert response.status == 404
    text = audit(phone740)["text"]
    assert "No cable C999999" in text and "URLconf" not in text
    assert phone740.get_by_role("link", name="Record this label").is_visible()
    phone740.screenshot(path=str(artifacts / "f1-404-phone.png"), full_page=True)
    phone740.goto(live_server.url + "/labels/print/")
    audit(phone740)
    phone740.goto(live_server.url + "/journal/rack/A01/add")
    audit(phone740)


def test_the_impact_card_on_a_phone(live_server, plant, phone740, artifacts):
    """J-102's link degraded for three hours under a one-GPU job running for two: the Impact card
    on the cable and module pages keeps the phone rules, below the first screen's essentials."""
    f.UserFactory(username="walker", role="technician")
    cable = plant["cables"]["J-102"]
    link = Link.objects.get(segments__cable=cable, active=True)
    now = timezone.now()
    Alert.objects.create(
        key="fec_degradation-impact-e2e",
        rule="fec_degradation",
        severity=Severity.NOTIFY,
        link=link,
        cable=cable,
        opened_at=now - timedelta(hours=3),
        updated_at=now,
        summary="pre-FEC BER 3e-5 at the B end receiver",
    )
    nic = link.a_port if link.a_port.device.name == "gpu-0001" else link.b_port
    GpuNicMap.objects.create(device_model=nic.device.model, gpu=0, port_name=nic.name, rail=1)
    job_register(
        job_id="90210",
        name="llama-pretrain",
        ranks=[RankSpec(rank=0, host="gpu-0001", local_rank=0, gpu=0)],
        started_at=now - timedelta(hours=2),
        now=now - timedelta(hours=2),
    )
    log_in(phone740, live_server.url, "walker")
    phone740.goto(live_server.url + "/c/J-102")
    audit(phone740)
    card = phone740.get_by_test_id("impact").inner_text()
    assert "1 job, 1 rank, 2 GPU-hours over this cable while degraded" in card, card
    assert "rank 0 on gpu-0001 GPU 0" in card
    for test_id in ("end-A", "end-B", "top-alert"):
        assert bottom(phone740, test_id) <= FIRST_SCREEN, test_id
    phone740.get_by_test_id("impact").screenshot(path=str(artifacts / "impact-card-phone.png"))
    phone740.goto(f"{live_server.url}/t/{nic.cage.transceiver.pk}")
    audit(phone740)
    assert "1 job, 1 rank" in phone740.get_by_test_id("impact").inner_text()


def test_the_link_line_reads_as_a_sentence(live_server, plant, phone740):
    """The cable page's link line, "TIA Pass, PMD Pass (0.43 dB of 3.00 dB)", reads as one
    sentence: each verdict is as wide as its word. The test rows above it line their verdicts up
    in a column of 4.5 rem; inside the sentence that width left a gap before the comma."""
    f.UserFactory(username="walker", role="technician")
    for label in ("J-100", "T-100", "J-101"):  # every segment passes: "TIA Pass," (a short word)
        f.cable_test(
            plant["cables"][label],
            verdict="pass",
            tested_at=timezone.now() - timedelta(days=1),
            loss_db=0.3,
            budget_db=1.5,
            margin_db=1.2,
        )
    log_in(phone740, live_server.url, "walker")
    phone740.goto(f"{live_server.url}/c/T-100")
    assert "TIA Pass," in phone740.locator(".channel").first.inner_text()
    gaps = phone740.evaluate(
        """() => [...document.querySelectorAll('.channel .verdict')].map(el => {
            const words = document.createRange();
            words.selectNodeContents(el);
            return el.getBoundingClientRect().width - words.getBoundingClientRect().width;
        })"""
    )
    assert gaps, "no link line on the trunk's page"
    assert max(gaps) < 1, f"blank space after a verdict's word on the link line: {gaps} px"
