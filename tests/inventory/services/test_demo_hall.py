"""The demo looks like a hall that keeps up: a few retests overdue, no test recorded after the
demo's day, and a few open alerts and reported faults for the pages to show."""

from datetime import UTC, date, datetime, time

import pytest
from django.db.models import Max
from django.test import Client

from inventory.core.choices import AlertRule, AlertState, CableStatus, FieldNoteKind
from inventory.models import Alert, Cable, CableTest, FieldNote
from inventory.services.demo.seed import demo_seed
from tests.seeded import seeded_module

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 11, 29)


#: The 64-GPU demo, seeded once for the module (``tests/seeded.py``).
hall = seeded_module(lambda: demo_seed(gpus=64, seed=5, as_of=AS_OF))


def test_only_a_few_retests_are_overdue_and_some_are_due_soon(hall):
    scheduled = Cable.objects.filter(retest_due__isnull=False)
    overdue = scheduled.filter(retest_due__lt=AS_OF).count()
    assert scheduled.count() > 100
    assert overdue / scheduled.count() < 0.08  # a few percent, not 92%
    assert scheduled.filter(retest_due__gte=AS_OF).count() > overdue


def test_no_test_is_dated_after_the_demo_day(hall):
    latest = CableTest.objects.aggregate(m=Max("tested_at"))["m"]
    assert latest <= datetime.combine(AS_OF, time(0, 0), tzinfo=UTC)


def test_the_hall_has_open_alerts_and_reported_faults_to_show(hall):
    # the hall's incidents; the demo job's spike is its own (tests/inventory/services/test_demo_job.py)
    incidents = Alert.objects.filter(state=AlertState.OPEN).exclude(rule=AlertRule.TAIL_LATENCY_SPIKE)
    assert 3 <= incidents.count() <= 12
    faulty = Cable.objects.filter(status=CableStatus.FAULTY)
    assert faulty.count() == hall.counts["faults"] >= 1
    for cable in faulty:
        note = FieldNote.objects.get(cable=cable, kind=FieldNoteKind.FAULT)
        assert note.text and note.status_after == CableStatus.FAULTY
        # the status change is in the cable's history, with its reason
        assert cable.history.filter(
            status=CableStatus.FAULTY, history_change_reason__contains="fault"
        ).exists()


def test_a_demo_fault_is_one_journal_entry_named_as_on_its_card(hall, user_with_role):
    """The demo's fault reports and their status changes were two journal entries hours apart
    ("system changed In production -> Faulty" today, "system fault reported" yesterday), and the
    report's card said "someone" where the journal said "system"."""
    tech_client = Client()
    tech_client.force_login(user_with_role("technician", "tech"))
    for cable in Cable.objects.filter(status=CableStatus.FAULTY):
        note = FieldNote.objects.get(cable=cable, kind=FieldNoteKind.FAULT)
        html = tech_client.get(f"/c/{cable.label}").content.decode()
        journal = html[html.index("Journal and history") :]
        assert journal.count("Faulty") == 1, cable.label  # the one entry carries the change
        assert (
            "<strong>someone</strong> fault reported" in journal
            and "<strong>system</strong> fault" not in journal
        )
        assert f"{note.text}" in journal


def test_each_demo_alert_ranks_first_the_repair_its_recommendation_names(hall):
    """A demo alert carries the advice code the rule engine would write, so the repair ranking
    on its page starts with the first step its recommendation names (not "Other, 50%")."""
    from inventory.selectors.alerts.repairs import alert_ranking

    first_words = {"clean": "clean", "reseat": "re-seat", "swap_module": "module", "replace_cable": "cable"}
    seen = set()
    for alert in Alert.objects.filter(state=AlertState.OPEN).exclude(rule=AlertRule.TAIL_LATENCY_SPIKE):
        _, ranking = alert_ranking(alert)
        top = ranking.top.action
        assert top != "other", (alert.rule, alert.recommendation)
        text = alert.recommendation.lower()
        named = min((text.find(w), a) for a, w in first_words.items() if w in text)[1]
        assert top == named, (alert.rule, top, alert.recommendation)
        seen.add(alert.rule)
    assert len(seen) == 3
