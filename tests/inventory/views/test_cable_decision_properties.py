"""The one decision about a cable, over generated plants: random tests, alerts of every severity,
faults and replacements on the page plant (``conftest.plant``)::

    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth0]--J-102--[leaf-01 Ethernet1/1]

For every cable of every generated plant:

* "Mark in production" is never offered (the page's next step, the API's ``next_step``, the
  list's) while an alert of warning level or above is open on a link through the cable, and the
  server refuses it when a technician posts it anyway;
* every failure names an existing cable as its segment, a figure in dB and its limit, and links
  to that segment; the page never says "Tests fail" without them;
* the cable page, the API's ``next_step``, the desk list's row, the rack pages' rows and the
  retest worklist's rows say the same state (the rack lists every cable with an open alert or
  fault, an overdue retest or a degraded or faulty status; the worklist every cable due);
* no page contradicts itself (``story_checks``: "Mark in production" beside an open alert,
  "fails" without a segment, status words that are not the decision's).

Each example runs inside a savepoint that is rolled back, so one plant serves them all.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.db.models import Q
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from inventory.core.choices import (
    SEVERITY_ORDER,
    AlertRule,
    AlertState,
    CableStatus,
    FieldNoteKind,
    Severity,
    Verdict,
)
from inventory.core.choices import TestKind as Kind  # pytest would collect a name starting with Test
from inventory.models import Alert, Cable, CableTest, FieldNote, Link
from inventory.selectors.decision import cable_decisions
from inventory.services.plant import cables as cable_services
from tests.inventory.story_checks import page_decisions, story_problems
from tests.inventory.views.test_cable_page_evidence import olts

pytestmark = pytest.mark.django_db

LABELS = ("J-100", "T-100", "J-101", "J-102")
FIBRES = {"J-100": 8, "T-100": 24, "J-101": 8, "J-102": 8}
STATUSES = (
    CableStatus.INSTALLED,
    CableStatus.TESTED,
    CableStatus.IN_PRODUCTION,
    CableStatus.DEGRADED,
    CableStatus.FAULTY,
)
DB_FIGURE = re.compile(r"\d+\.\d\d dB")

cable_plan = st.fixed_dictionaries(
    {
        "status": st.sampled_from(STATUSES),
        # None: no power-meter test; else the loss every fibre reads (a trunk's budget is ~2.6 dB)
        "loss": st.one_of(st.none(), st.sampled_from([0.3, 0.5, 1.1, 1.6, 2.4, 3.1])),
        "fault": st.booleans(),
        # The retest: none scheduled, overdue (on the rack page and the worklist), or due in
        # three days (on the worklist only).
        "due": st.sampled_from([None, -5, 3]),
    }
)
alert_plan = st.fixed_dictionaries(
    {
        "link": st.sampled_from(["long", "short"]),  # gpu eth1 - leaf Ethernet2/1, or eth0 - Ethernet1/1
        "severity": st.sampled_from([s.value for s in Severity]),
        "rule": st.sampled_from([AlertRule.LINK_FLAP, AlertRule.FEC_DEGRADATION, AlertRule.FEC_TAIL]),
        "suspect": st.sampled_from([None, *LABELS]),
        "path": st.booleans(),  # every segment recorded on the alert, or only its link
    }
)
plant_plan = st.fixed_dictionaries(
    {
        "cables": st.fixed_dictionaries({label: cable_plan for label in LABELS}),
        "alerts": st.lists(alert_plan, max_size=3),
        "replace": st.sampled_from([None, "J-100", "J-102", "T-100"]),
    }
)


@pytest.fixture
def clients(plant, user_with_role):
    """An engineer on the pages (every button is theirs to press) and on the API."""
    for cable in plant["cables"].values():
        cable.length_m = Decimal("3")  # below the OTDR dead-zone limit: the power meter is the gate
        cable._change_reason = "test setup"
        cable.save()
    engineer = user_with_role("engineer", "eng")
    page = Client()
    page.force_login(engineer)
    api = APIClient()
    api.force_authenticate(engineer)
    return page, api


def _links() -> dict[str, Link]:
    long = Link.objects.get(active=True, segments__cable__label="T-100")
    short = Link.objects.get(active=True, segments__cable__label="J-102")
    return {"long": long, "short": short}


def _build(plan: dict, now) -> None:
    cables = {c.label: c for c in Cable.objects.filter(label__in=LABELS)}
    for label, p in plan["cables"].items():
        c = cables[label]
        if p["loss"] is not None:
            olts(c, p["loss"], FIBRES[label], now - timedelta(hours=2))
        c.status = p["status"]  # a recorded status, whatever the evidence
        c.retest_due = None if p["due"] is None else timezone.localdate(now) + timedelta(days=p["due"])
        c._change_reason = "test setup"
        c.save()
        if p["fault"]:
            FieldNote.objects.create(
                cable=c,
                kind=FieldNoteKind.FAULT,
                text=f"seen at {label}",
                status_before=p["status"],
                status_after=p["status"],
                at=now - timedelta(hours=1),
            )
    links = _links()
    for i, a in enumerate(plan["alerts"]):
        link = links[a["link"]]
        alert = Alert.objects.create(
            key=f"{a['rule']}:link:{link.pk}:{i}",
            rule=a["rule"],
            severity=a["severity"],
            link=link,
            cable=cables[a["suspect"]] if a["suspect"] else None,
            opened_at=now - timedelta(minutes=30),
            updated_at=now - timedelta(minutes=5),
            summary=f"{a['rule']} on the link",
            recommendation="Swap the module at the flapping end.",
        )
        if a["path"]:
            alert.cables.set([s.cable_id for s in link.segments.all()])
    if plan["replace"]:
        old = Cable.objects.get(label=plan["replace"])
        cable_services.cable_replace(old=old, new_label=f"R-{old.label}", now=now)


def _blocking_alert_open(cable: Cable) -> bool:
    """The rule, from the records: an open alert of warning level or above on an active link
    through the cable, or naming it as the suspect or a segment."""
    severities = [s for s, rank in SEVERITY_ORDER.items() if rank >= SEVERITY_ORDER[Severity.WARNING]]
    return (
        Alert.objects.filter(state=AlertState.OPEN, severity__in=severities)
        .filter(Q(link__active=True, link__segments__cable=cable) | Q(cable=cable) | Q(cables=cable))
        .exists()
    )


def _page_state(html: str) -> tuple[str, str | None, str]:
    summary = html.split('aria-label="Status"', 1)[1].split("</section>", 1)[0]
    state = re.search(r'data-state="([a-z]+)"', summary).group(1)
    step = re.search(r'data-testid="next-step" data-step="([a-z]+)"', summary)
    return state, step.group(1) if step else None, summary


def _list_states(html: str) -> dict[str, str]:
    out = {}
    for row in html.split("<tr")[1:]:
        label = re.search(r'class="mono" href="/c/([^"/]+)"', row)
        state = re.search(r'data-testid="row-next-step" data-state="([a-z]+)"', row)
        if label and state:
            out[label.group(1)] = state.group(1)
    return out


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=plant_plan)
def test_one_decision_over_generated_plants(clients, plan):
    page, api = clients
    now = timezone.now()
    with transaction.atomic():
        _build(plan, now)
        pages = {
            "list": page.get("/cables/?per_page=100").content.decode(),
            "rack A01": page.get("/r/A01").content.decode(),
            "rack B01": page.get("/r/B01").content.decode(),
            "worklist": page.get("/retests/").content.decode(),
        }
        listed = _list_states(pages["list"])
        shown = {name: page_decisions(html) for name, html in pages.items()}
        for name, html in pages.items():
            assert story_problems(html) == [], (name, plan)
        # "Has an open alert" means the decision's open alerts in the filter and the CSV export too.
        everything = list(Cable.objects.all())
        alerted = {c.label for c in everything if cable_decisions(cables=[c])[c.pk].alerts}
        filtered = b"".join(page.get("/cables/?has_open_alert=true&format=csv").streaming_content).decode()
        exported = b"".join(page.get("/cables/?format=csv").streaming_content).decode()
        assert {r["label"] for r in csv.DictReader(io.StringIO(filtered))} == alerted, plan
        assert {r["label"] for r in csv.DictReader(io.StringIO(exported)) if r["open_alert"]} == alerted, plan
        for cable in Cable.objects.order_by("label"):
            html = page.get(f"/c/{cable.label}").content.decode()
            assert story_problems(html) == [], (cable.label, plan)
            state, step, summary = _page_state(html)
            decision = api.get(f"/api/cables/{cable.label}/").json()["next_step"]

            # The page, the API and the lists say the same.
            assert state == decision["state"] == listed[cable.label], (cable.label, plan)
            assert step == (decision["step"]["key"] if decision["step"] else None), (cable.label, plan)
            for name in ("rack A01", "rack B01", "worklist"):
                assert shown[name].get(cable.label, state) == state, (name, cable.label, plan)
            live = cable.status not in (CableStatus.RETIRED, CableStatus.PLANNED)
            if live and cable.retest_due is not None:
                assert cable.label in shown["worklist"], (cable.label, plan)
            racks = set(
                Cable.objects.filter(pk=cable.pk, ends__active=True)
                .values_list("ends__cage__device__rack__name", "ends__port__device__rack__name")
                .distinct()
            )
            # What the rack lists: an open alert (any severity) naming the cable or on a link
            # through it, an open fault report, a failing latest test of its own (power meter,
            # OTDR, qualification), degraded or faulty, or a retest overdue.
            latest = {}
            for kind, verdict in (
                CableTest.objects.filter(cable=cable)
                .order_by("tested_at", "pk")
                .values_list("kind", "verdict")
            ):
                latest[kind] = verdict
            own_fails = any(latest.get(k) == Verdict.FAIL for k in (Kind.OLTS, Kind.OTDR, Kind.QUALIFICATION))
            needs_look = live and (
                bool(cable_decisions(cables=[cable])[cable.pk].alerts)
                or own_fails
                or FieldNote.objects.filter(cable=cable, kind=FieldNoteKind.FAULT, closed_at=None).exists()
                or cable.status in (CableStatus.DEGRADED, CableStatus.FAULTY)
                or (cable.retest_due is not None and cable.retest_due < timezone.localdate(now))
            )
            for rack in {r for pair in racks for r in pair if r}:
                assert (cable.label in shown[f"rack {rack}"]) == needs_look, (rack, cable.label, plan)

            # Never "Mark in production" while a warning-or-worse alert is open on its link.
            offers = decision["step"] is not None and decision["step"]["status"] == CableStatus.IN_PRODUCTION
            if _blocking_alert_open(cable):
                assert (
                    not offers and 'value="in_production"' not in summary.split('data-testid="override"')[0]
                )
                assert decision["state"] == "alert" and decision["blocking_alerts"], (cable.label, plan)
                if cable.status != CableStatus.RETIRED:
                    before = cable.status
                    page.post(f"/c/{cable.label}/status", {"status": CableStatus.IN_PRODUCTION})
                    cable.refresh_from_db()
                    assert cable.status == before, (cable.label, plan)

            # Every failure names its segment, a figure and its limit, and links to the segment.
            labels = set(Cable.objects.values_list("label", flat=True))
            for f in decision["fails"]:
                assert f["segment"] in labels and f["segment"] in f["text"], f
                assert DB_FIGURE.search(f["figure"]) and DB_FIGURE.search(f["limit"]), f
                assert f["url"].startswith(f"/c/{f['segment']}#"), f
            if "Tests fail" in summary:
                assert decision["fails"], (cable.label, plan)
                for f in decision["fails"][:3]:  # the first screen lists three, then "and N more"
                    assert f'href="{f["url"]}"' in summary and f["figure"] in summary
        transaction.set_rollback(True)
