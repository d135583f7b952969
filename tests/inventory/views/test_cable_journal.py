"""The cable page's "Journal and history": who did what, in the page's words, one entry per
action. The plant of ``conftest.plant``:
    [gpu-0001 eth0]--J-102 (in production, retest overdue, one OLTS pass)--[leaf-01 Ethernet1/1]
"""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.models import Cable, FieldNote
from inventory.templatetags.cabletrack import day

pytestmark = pytest.mark.django_db

SEEN = "jacket pinched at U12"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _history(html: str) -> list[str]:
    """The history section's entries, as the user reads them."""
    section = html.split('id="history"', 1)[1].split("</section>", 1)[0]
    return [_text(li) for li in re.findall(r"<li[^>]*>(.*?)</li>", section, flags=re.S)]


def _visible(html: str) -> str:
    """What the page shows: the body's text, without forms' hidden values and the head."""
    body = html.split("<body", 1)[1]
    return _text(re.sub(r"<(script|style)\b.*?</\1>", " ", body, flags=re.S))


def _power_meter_pass(client, label: str):
    form = {"wavelength_nm": "1310", "direction": "AB", "reference_method": "1"}
    form.update({f"loss_{i}": "0.35" for i in range(1, 9)})
    return client.post(f"/c/{label}/test/power-meter", form)


def test_a_recorded_test_moves_the_retest_date_in_the_testers_name_in_page_dates(
    plant, tech_client, django_capture_on_commit_callbacks
):
    """The due date moves after the test's commit; the change is the technician's, not "system"."""
    before = timezone.localdate() - timedelta(days=3)  # the plant's J-102 was due three days ago
    with django_capture_on_commit_callbacks(execute=True):
        assert _power_meter_pass(tech_client, "J-102").status_code == 302
    after = Cable.objects.get(label="J-102").retest_due
    assert after > timezone.localdate()
    history = _history(tech_client.get("/c/J-102").content.decode())
    moved = [e for e in history if "Retest due:" in e and "test recorded" in e]
    assert len(moved) == 1, history
    assert " tech changed " in f" {moved[0]} " and "system" not in moved[0]
    assert f"Retest due: {day(before)} → {day(after)}" in moved[0]
    assert not re.search(r"\d{4}-\d{2}-\d{2}", moved[0])  # no ISO dates: the page's own words


def test_one_fault_report_is_one_journal_entry_and_its_text_is_shown_where_it_is_needed(plant, tech_client):
    """After ``tech`` reports a fault the page shows what was seen on the first screen (the
    headline), once in the open faults (what Close settles) and once in the history (the record,
    with the status change it made): not again in the "why faulty" line beside the headline, and
    not as a second history entry for the status change."""
    resp = tech_client.post("/c/J-102/fault", {"seen": SEEN, "status": "faulty"})
    assert resp.status_code == 302
    html = tech_client.get("/c/J-102").content.decode()

    faulted = [e for e in _history(html) if "Status: In production → Faulty" in e]
    assert len(faulted) == 1, faulted
    assert " tech fault reported " in f" {faulted[0]} " and SEEN in faulted[0]

    assert _visible(html).count(SEEN) == 3
    headline = html.split('data-testid="evidence-conflict">', 1)[1].split("</p>", 1)[0]
    assert SEEN in headline
    opened = html.split('data-testid="journal-open">', 1)[1].split("</section>", 1)[0]
    assert SEEN in opened
    why = _text(html.split('data-testid="status-why">', 1)[1].split("</p>", 1)[0])
    assert SEEN not in why and "tech" in why


def test_a_fault_is_settled_by_a_test_after_it_not_by_closing_it(plant, tech_client):
    """Closing a fresh fault took it off the page, and the page then said "Recorded as faulty, but
    every test passes ...: ready for production" on the test from before the fault; one tap put
    the cable back into production. The fault's card now says what settles it, closing it is
    refused until a test after the report exists, and then it closes."""
    tech_client.post("/c/J-102/fault", {"seen": SEEN, "status": "faulty"})
    note = FieldNote.objects.get(cable__label="J-102", kind="fault")
    html = tech_client.get("/c/J-102").content.decode()
    opened = html.split('data-testid="journal-open">', 1)[1].split("</section>", 1)[0]
    assert 'data-testid="fault-awaits-test"' in opened and f"/journal/{note.pk}/close" not in opened

    refused = tech_client.post(f"/journal/{note.pk}/close", follow=True).content.decode()
    assert "J-102&#x27;s fault is settled by a test after the repair, not by closing it" in refused
    note.refresh_from_db()
    assert note.closed_at is None
    assert "Mark in production" not in refused and SEEN in refused.split('data-testid="journal-open">', 1)[1]

    assert _power_meter_pass(tech_client, "J-102").status_code == 302
    html = tech_client.get("/c/J-102").content.decode()
    opened = html.split('data-testid="journal-open">', 1)[1].split("</section>", 1)[0]
    assert 'data-testid="fault-awaits-test"' not in opened and f"/journal/{note.pk}/close" in opened
    assert tech_client.post(f"/journal/{note.pk}/close").status_code == 302
    note.refresh_from_db()
    assert note.closed_at is not None
