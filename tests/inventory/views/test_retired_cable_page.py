"""A retired cable's page, scanned from its old label after a replacement: nothing on it says
there is still something to do there, or that someone else could do it.

Plant of ``conftest.plant``: [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1], in production.
"""

import re

import pytest

from inventory.core.choices import FieldNoteKind
from inventory.models import Cable, FieldNote
from tests.inventory.views.conftest import without_name_spans

pytestmark = pytest.mark.django_db


def test_a_replaced_cables_fault_is_settled_and_its_page_asks_nothing_more(
    plant, site_tech_client, engineer_client, tech_client
):
    site_tech_client.post("/c/J-102/fault", {"seen": "jacket crushed under the tile", "status": "faulty"})
    fault = FieldNote.objects.get(cable__label="J-102", kind=FieldNoteKind.FAULT)
    assert fault.closed_at is None

    resp = engineer_client.post("/c/J-102/replace", {"new_label": "J-200", "reason": "jacket crushed"})
    assert resp.status_code == 302

    # The retirement settled the fault, by who retired it: the old cable never goes back into
    # production, which is what would otherwise settle it.
    fault.refresh_from_db()
    assert fault.closed_at is not None and fault.closed_by.username == "eng"
    assert "retired" in fault.close_reason
    for client in (site_tech_client, tech_client):
        html = client.get("/c/J-102").content.decode()
        assert "Retired, replaced by" in html
        # no open fault card promising that a test will settle it
        assert 'data-testid="journal-open"' not in html
        assert "it closes when the cable goes back into production" not in html
        # and no refusal: no one reports a fault on a retired cable ("only an engineer may ...")
        assert 'data-testid="refused"' not in html
        assert "only an engineer may" not in html and "ask an admin" not in html
        # its tests are its history, not a production gate it fails
        assert "not ready for production" not in html and "Not ready for production" not in html
        assert "Retired: its tests are kept as its history." in html
    # the fault stays in the history
    assert "jacket crushed under the tile" in site_tech_client.get("/c/J-102").content.decode()


def test_a_replaced_cables_history_names_its_replacement_and_says_yes_or_no(plant, engineer_client):
    """The history of the old cable said "Replaced by: – → 855" (the new cable's database id) and,
    for each end, "Active: True → False" (Python's words)."""
    engineer_client.post("/c/J-102/replace", {"new_label": "J-200", "reason": "bent"})
    html = without_name_spans(engineer_client.get("/c/J-102").content.decode())
    changes = re.findall(r'<span class="change">([^<]*)</span>', html)
    assert "Replaced by: – → J-200" in changes
    assert changes.count("Active: yes → no") == 2
    assert not [c for c in changes if "True" in c or "False" in c or re.search(r"→ \d+$", c)]


def test_a_retired_cable_has_no_retest_due_even_with_a_date_left_on_it(plant, engineer_client):
    """ "Overdue" is never said of a retired cable (``retests.overdue``): its page said "Retest due
    3 days ago overdue" from the date its last test had left, as if it were still to be tested."""
    assert "overdue" in _retest(engineer_client.get("/c/J-102").content.decode())  # in production: overdue
    engineer_client.post("/c/J-102/replace", {"new_label": "J-200", "reason": "bent"})
    assert Cable.objects.get(label="J-102").retest_due is not None  # the date stays on the record
    assert _retest(engineer_client.get("/c/J-102").content.decode()) == "none: retired"


def _retest(html: str) -> str:
    return html.split('data-testid="retest">', 1)[1].split("</dd>", 1)[0]
