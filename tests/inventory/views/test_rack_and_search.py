from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inventory.core.choices import AlertRule, CableStatus, DeviceRole, FieldNoteKind, Severity
from inventory.models import Alert, Cable, FieldNote
from inventory.selectors.decision import cable_decisions
from tests import factories as f
from tests.inventory import story_checks
from tests.inventory.test_query_budget import DECISION_QUERIES

pytestmark = pytest.mark.django_db


def test_rack_page_lists_devices_top_u_first_with_the_cables_that_need_attention(plant, tech_client):
    html = tech_client.get("/r/A01").content.decode()
    # pp-a sits at U40, gpu-0001 at U10: a technician works down the rack
    assert html.index("pp-a") < html.index("gpu-0001")
    assert 'href="/d/pp-a"' in html and 'href="/d/gpu-0001"' in html
    # J-102's retest is overdue: listed, with where it goes; J-100 and T-100 are fine.
    assert 'href="/c/J-102"' in html and "retest overdue" in html and "leaf-01" in html
    assert 'href="/c/J-100"' not in html and 'href="/c/T-100"' not in html


def test_the_device_page_lists_every_cable_and_module_of_the_device(plant, tech_client):
    html = tech_client.get("/d/gpu-0001").content.decode()
    for label in ("J-100", "J-102"):
        assert f'href="/c/{label}"' in html
    assert plant["gpu"][0].cage.transceiver.serial in html
    assert "leaf-01" in html and "pp-a" in html  # where each cable goes


# Session, user, permissions, rack (with its row and room: the policy's site scope needs no
# read), devices, the ends (one UNION), the open alerts they touch (one UNION), the cables on an
# alerted link, with an open fault or a failing latest test (one UNION), the far ends of the cables listed, the cages
# with their modules, the cage-less ports, the rack's alerts and their FEC series (when it has
# some), the rack's journal, the user's team sites; then the listed cables and their decision.
# None grows with the rack or with the rows listed.
RACK_PAGE_QUERIES = 15 + 1 + DECISION_QUERIES


def _rack_queries(client, rack: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(f"/r/{rack}")
    assert response.status_code == 200
    return len(ctx.captured_queries), response.content.decode()


def _open_alert(link, *, suspect=None, severity=Severity.PAGE, key="a"):
    return Alert.objects.create(
        key=f"{key}:{link.pk}",
        rule=AlertRule.LINK_FLAP,
        severity=severity,
        link=link,
        cable=suspect,
        opened_at=timezone.now(),
        updated_at=timezone.now(),
        summary="flapping",
        recommendation="Swap the module at the A end (gpu-0001 OSFP1).",
    )


def test_rack_page_queries_do_not_grow_with_the_rows_it_lists(plant, tech_client):
    """Two cables listed (J-102 overdue with an info alert, J-100 with a fault reported) or five
    (a warning on the long link adds T-100; two more overdue jumpers on a second node): the same
    queries (the rack's alert block, with its FEC series, is there in both)."""
    cables = plant["cables"]
    FieldNote.objects.create(cable=cables["J-100"], kind=FieldNoteKind.FAULT, text="dust", at=timezone.now())
    _open_alert(cables["J-102"].link_segments.get().link, severity=Severity.INFO, key="info")
    few, html = _rack_queries(tech_client, "A01")
    assert set(_rows(html)) == {"J-100", "J-102"}
    assert few <= RACK_PAGE_QUERIES

    _open_alert(cables["T-100"].link_segments.get().link, severity=Severity.WARNING)
    _, node = f.twin_port_device("gpu-0002", rack=plant["racks"][0], u=12, role=DeviceRole.GPU_NODE)
    for i, leaf_port in enumerate((plant["leaf"][1], plant["leaf"][3])):
        extra = f.jumper(f"J-20{i}", node[i], leaf_port, status=CableStatus.IN_PRODUCTION)
        extra.retest_due = timezone.localdate() - timedelta(days=9)
        extra.save()
    many, html = _rack_queries(tech_client, "A01")
    assert set(_rows(html)) == {"J-100", "T-100", "J-102", "J-200", "J-201"}
    assert many == few


def test_rack_rows_say_the_cables_decision(plant, tech_client):
    """A rack row says what the cable page says: the state words and the next step, never a
    status of its own ("Mark in production" beside an open alert)."""
    cables = plant["cables"]
    long_link = cables["T-100"].link_segments.get().link
    _open_alert(long_link, severity=Severity.WARNING)
    decisions = cable_decisions(cables=list(Cable.objects.filter(label__in=["J-100", "T-100", "J-102"])))
    html = tech_client.get("/r/A01").content.decode()
    rows = _rows(html)
    assert set(rows) == {"J-100", "T-100", "J-102"}
    for cable_id, d in decisions.items():
        label = Cable.objects.get(pk=cable_id).label
        assert rows[label]["state"] == d.state, label
        assert d.words in rows[label]["text"] and d.step.label in rows[label]["text"], label
    assert rows["J-100"]["state"] == rows["T-100"]["state"] == "alert"
    assert "Mark in production" not in html
    assert rows["J-102"]["state"] in ("retest", "untested")  # overdue: its step is a test to record
    assert "Record the" in rows["J-102"]["text"]
    # The device page says the same for every cable of the device.
    device = tech_client.get("/d/gpu-0001").content.decode()
    assert _rows(device) == {k: rows[k] for k in ("J-100", "J-102")}


def test_a_cable_whose_only_problem_is_a_failing_test_is_listed_on_its_rack(plant, tech_client):
    """T-100 has no alert, no fault, no overdue retest: only its latest power-meter test fails.
    The rack page lists it, and its row says what the cable page says (the failing segment)."""
    trunk = plant["cables"]["T-100"]
    assert "T-100" not in _rows(tech_client.get("/r/A01").content.decode())
    f.cable_test(trunk, verdict="fail", tested_at=timezone.now(), loss_db=3.9)
    rows = _rows(tech_client.get("/r/A01").content.decode())
    decision = cable_decisions(cables=[Cable.objects.get(pk=trunk.pk)])[trunk.pk]
    assert decision.fails, "the decision itself names the failing test"
    assert rows["T-100"]["state"] == decision.state
    assert decision.words in rows["T-100"]["text"] and decision.step.label in rows["T-100"]["text"]


def _rows(html: str) -> dict[str, dict]:
    """{cable label: {state, text}} of each row that says a decision (``story_checks``)."""
    root = story_checks.parse(html)
    return {
        label: {"state": state, "text": root_text}
        for label, state, root_text in (
            (story_checks.cable_of_row(cell), cell.attrs["data-state"], cell.text)
            for cell in story_checks.decision_cells(root)
        )
        if label
    }


def test_unknown_rack_is_a_404(plant, tech_client):
    assert tech_client.get("/r/ZZ").status_code == 404


@pytest.mark.parametrize(
    ("q", "expect"),
    [
        ("j-10", ["J-100", "J-101", "J-102"]),  # partial label, any case
        ("gpu-000", ["gpu-0001"]),  # partial device
        ("ethernet2/", ["leaf-01:Ethernet2/1", "leaf-01:Ethernet2/2"]),  # partial port
    ],
)
def test_search_finds_partial_matches(plant, tech_client, q, expect):
    resp = tech_client.get("/search/", {"q": q}, follow=True)
    html = resp.content.decode()
    for e in expect:
        assert e in html


def test_search_by_module_serial_opens_the_module(plant, tech_client):
    xcvr = plant["gpu"][0].cage.transceiver
    resp = tech_client.get("/search/", {"q": xcvr.serial.lower()})
    assert resp.status_code == 302 and resp["Location"] == f"/t/{xcvr.pk}"
    assert "J-102" in tech_client.get(resp["Location"]).content.decode()


def test_search_by_port_alias_opens_the_cable_on_it(plant, tech_client):
    from tests.factories import alias

    alias(plant["leaf"][0], "swp1s0", source="sonic")
    resp = tech_client.get("/search/", {"q": "leaf-01:swp1s0"})
    assert resp.status_code == 302 and resp["Location"] == "/c/J-102"


def test_search_box_is_on_every_page(plant, tech_client):
    for url in ("/", "/c/J-100", "/r/A01", "/cables/", "/transceivers/"):
        assert 'role="search"' in tech_client.get(url).content.decode()


def test_search_with_nothing_found_says_so(plant, tech_client):
    assert "Nothing matches" in tech_client.get("/search/", {"q": "qqqq"}).content.decode()
