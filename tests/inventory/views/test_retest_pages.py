"""The retest planning page, its CSV and PDF exports (QR codes decoded for real), the profile page
and the API.

    row A: rack RA1 (position 1), rack RA2 (position 2)   row B: rack RB1 (position 1)
    each rack: [gpu U<n>]--<cable>--[leaf U40]; due dates: overdue, this week, next week, later
"""

import csv
import io
from datetime import timedelta

import pypdfium2
import pytest
import zxingcpp
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from inventory.models import Cable, Rack, Room, Row, UserProfile
from inventory.selectors.decision import cable_decisions
from inventory.services.retests import due as retests
from tests import factories as f
from tests.inventory.test_query_budget import DECISION_QUERIES

pytestmark = pytest.mark.django_db
BASE = "https://ct.example.com"
# Session, user, permissions, the filter's choices, the racks, the due cables' ends, their end
# lines, the user's teams...; then the page's cables and their decision (``cable_decisions``).
WORKLIST_QUERIES = 12 + 1 + DECISION_QUERIES


@pytest.fixture
def worklist(settings):
    """Cables tested so that their due dates land in each bucket relative to today."""
    settings.CABLETRACK_BASE_URL = BASE
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    now = timezone.now()
    room = Room.objects.get_or_create(site=f.SiteFactory(name="Hall Test"), name="Hall 1")[0]
    row_a = Row.objects.get_or_create(room=room, name="A")[0]
    row_b = Row.objects.get_or_create(room=room, name="B")[0]
    plan = [
        # rack, row, position, cable, U, days since the last pass (90 = due today)
        ("RA2", row_a, 2, "C-A2-late", 5, 100),
        ("RA1", row_a, 1, "C-A1-high", 20, 89),
        ("RA1", row_a, 1, "C-A1-low", 4, 95),
        ("RB1", row_b, 1, "C-B1", 7, 91),
        ("RB1", row_b, 1, "C-B1-later", 9, 30),
    ]
    ports: dict[str, tuple] = {}
    for rack_name, row, pos, label, u, age in plan:
        rack = f.RackFactory(name=rack_name, row=row)
        rack.position = pos
        rack.save()
        _, a = f.twin_port_device(f"gpu-{label}", rack=rack, u=u, role="gpu_node", cages=1)
        _, b = f.twin_port_device(f"leaf-{label}", rack=rack, u=40 + u, cages=1)
        ports[label] = (a, b)
        cable = f.jumper(label, a[0], b[0], install_date=(now - timedelta(days=200)).date())
        f.record_test(cable, at=now - timedelta(days=age))
    retests.retest_due_recompute(now=now)
    return {"row_a": row_a, "row_b": row_b}


@pytest.fixture
def tech_client(client, user_with_role):
    client.force_login(user_with_role("technician"))
    return client


WALK = ["C-A1-low", "C-A1-high", "C-A2-late", "C-B1"]  # row A: RA1 (U4, U20), RA2; row B: RB1


def test_the_planning_page_lists_due_cables_in_walking_order(
    worklist, tech_client, django_assert_max_num_queries
):
    with django_assert_max_num_queries(WORKLIST_QUERIES):
        page = tech_client.get(reverse("retests-plan")).content.decode()
    positions = [page.index(f">{label}<") for label in WALK]
    assert positions == sorted(positions)
    assert "C-B1-later" not in page  # due in two months: not on this list
    assert "10 days overdue" in page
    assert "Rack RA1" in page and "row A" in page


def _worklist_queries(client) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as ctx:
        page = client.get(reverse("retests-plan")).content.decode()
    return len(ctx.captured_queries), page


def test_each_row_says_the_cables_decision_in_queries_that_do_not_grow_with_the_rows(worklist, tech_client):
    """Four rows or eight: the same queries; each row says what the cable page says."""
    few, page = _worklist_queries(tech_client)
    assert page.count('data-testid="row-next-step"') == 4
    rack = Rack.objects.get(name="RA1")
    now = timezone.now()
    for i in range(4):
        _, a = f.twin_port_device(f"gpu-more-{i}", rack=rack, u=30 + i, role="gpu_node", cages=1)
        _, b = f.twin_port_device(f"leaf-more-{i}", rack=rack, u=35 + i, cages=1)
        cable = f.jumper(f"C-more-{i}", a[0], b[0], install_date=(now - timedelta(days=200)).date())
        f.record_test(cable, at=now - timedelta(days=95))
    retests.retest_due_recompute(now=now)
    more, page = _worklist_queries(tech_client)
    assert page.count('data-testid="row-next-step"') == 8
    assert more == few <= WORKLIST_QUERIES
    late = Cable.objects.get(label="C-A2-late")
    decision = cable_decisions(cables=[late])[late.pk]
    row = page.split('href="/c/C-A2-late"', 1)[1].split("</li>", 1)[0]
    assert f'data-state="{decision.state}"' in row and decision.state in ("retest", "untested")
    assert decision.words in row and decision.step.label in row  # "Record the power-meter test"


def test_the_page_filters_by_row_and_bucket_and_reports_a_bad_filter(worklist, tech_client):
    page = tech_client.get(reverse("retests-plan"), {"row": worklist["row_b"].pk}).content.decode()
    assert ">C-B1<" in page and ">C-A1-low<" not in page
    assert "1 result<" in page and "1+ result" not in page  # an exact count, not "at least"
    page = tech_client.get(reverse("retests-plan"), {"bucket": "overdue"}).content.decode()
    assert ">C-A2-late<" in page and ">C-A1-high<" not in page
    page = tech_client.get(reverse("retests-plan"), {"rack": "NOPE"}).content.decode()
    assert "No rack named “NOPE”." in page and 'value="NOPE"' in page  # what was typed, kept to correct
    assert "This rack: NOPE" not in page and "NOPE today" not in page  # no shortcut to no rack
    tech_client.cookies["ct_near_rack"] = "RA1"
    page = tech_client.get(reverse("retests-plan"), {"rack": "NOPE"}).content.decode()
    assert "This rack: RA1" in page and "This rack: NOPE" not in page  # the rack last opened


def test_the_csv_export_is_the_worklist_in_walking_order(worklist, tech_client):
    response = tech_client.get(reverse("retests-csv"))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [r["cable"] for r in rows] == WALK
    first = rows[0]
    assert first["rack"] == "RA1" and first["row"] == "A" and first["u"] == "4"
    assert first["bucket"] == "overdue" and first["days_overdue"] == "5"
    assert first["url"] == f"{BASE}/c/C-A1-low"
    assert first["test"] == "OLTS/OTDR"
    # Each row says the cable's one decision, as the page's row does (an overdue retest here).
    decisions = cable_decisions(cables=list(Cable.objects.filter(label__in=WALK)))
    by_label = {c.label: decisions[c.pk] for c in Cable.objects.filter(label__in=WALK)}
    for r in rows:
        d = by_label[r["cable"]]
        assert (r["state"], r["next_step"]) == (d.state_line, d.step.label if d.step else "")
    assert first["state"] and first["next_step"].startswith("Record the")


def test_the_pdf_worklist_carries_a_scannable_qr_code_per_cable(worklist, tech_client):
    response = tech_client.get(reverse("retests-pdf"), {"row": worklist["row_a"].pk})
    assert response["Content-Type"] == "application/pdf"
    pdf = pypdfium2.PdfDocument(response.content)
    found = []
    for page in pdf:
        image = page.render(scale=3).to_pil()
        found += [b.text for b in zxingcpp.read_barcodes(image)]
    assert sorted(found) == sorted(f"{BASE}/c/{label}" for label in WALK[:3])
    text = "".join(page.get_textpage().get_text_range() for page in pdf)
    assert text.index("C-A1-low") < text.index("C-A1-high") < text.index("C-A2-late")
    # Each line says the cable's one decision (state and next step), not only its due date.
    late = Cable.objects.get(label="C-A2-late")
    line = cable_decisions(cables=[late])[late.pk].line
    assert "Record the" in line
    assert line in " ".join(text.split())


def test_the_profile_page_saves_preferences_and_rejects_bad_input(tech_client):
    assert tech_client.get(reverse("reminder-preferences")).status_code == 200
    bad = tech_client.post(
        reverse("reminder-preferences"), {"reminder_mode": "daily", "digest_weekday": 2, "digest_hour": 25}
    )
    assert bad.status_code == 200
    assert "less than or equal to 23" in bad.content.decode()
    assert not UserProfile.objects.exists()
    ok = tech_client.post(
        reverse("reminder-preferences"), {"reminder_mode": "weekly", "digest_weekday": 4, "digest_hour": 6}
    )
    assert ok.status_code == 302
    profile = UserProfile.objects.get()
    assert (profile.reminder_mode, profile.digest_weekday, profile.digest_hour) == ("weekly", 4, 6)


def test_the_sweep_button_queues_the_task_for_technicians_only(
    worklist, client, user_with_role, django_capture_on_commit_callbacks
):
    client.force_login(user_with_role("viewer"))
    assert client.post(reverse("retests-sweep")).status_code == 403
    client.force_login(user_with_role("technician"))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("retests-sweep"))
    assert response.status_code == 302
    assert len(callbacks) == 1


def test_the_api_lists_the_worklist_and_queues_a_sweep(worklist, api_as, django_capture_on_commit_callbacks):
    viewer = api_as("viewer")
    data = viewer.get("/api/retests/worklist/").json()
    assert [d["cable"] for d in data] == WALK
    assert data[0]["url"] == f"{BASE}/c/C-A1-low"
    assert viewer.get("/api/retests/worklist/", {"bucket": "someday"}).status_code == 400
    assert viewer.get("/api/retests/worklist/", {"row": "x"}).json() == {
        "row": ["row must be an id (a whole number)."]
    }
    assert viewer.post("/api/retests/sweep/").status_code == 403
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert api_as("engineer").post("/api/retests/sweep/").status_code == 202
    assert len(callbacks) == 1
