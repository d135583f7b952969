"""A repair recorded on an alert is judged by the telemetry that follows, replayed through the
real ingest endpoint, the real rollup, the rule task and the judging task (issue 35).

Topology (``factories.production_jumper_pair``)::

    [gpu-r eth0]--J-R0--[leaf-r Ethernet1/1]     link 0
    [gpu-r eth1]--J-R1--[leaf-r Ethernet1/2]     link 1: the leaf's receiver degrades

Timeline (minutes from the start): healthy 0-18 (the rules learn the baselines), the pre-FEC
BER at leaf-r Ethernet1/2 400x its baseline 18-30 (``fec_degradation`` opens at 30), a
technician records "clean, End B" at 30, then the telemetry decides.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import AlertState, RepairOutcome, TokenKind
from inventory.models import Alert, Repair
from inventory.services import alerts as svc
from inventory.tasks import repairs_judge_task
from tests import factories as f
from tests.inventory.services.alerts.test_alerts_replay import PORTS, post, roll, series

pytestmark = pytest.mark.django_db

FAULTY = ("leaf-r", "Ethernet1/2")
STEP = timedelta(minutes=5)


@pytest.fixture
def replay(user_with_role):
    f.production_jumper_pair()
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(hours=2)
    sent = {"until": start}

    def run(until_min: int, ber_at_fault, every=STEP):
        """Post the telemetry up to ``until_min``, rolling up and evaluating the rules every
        ``every`` as the beat would."""
        end = start + timedelta(minutes=until_min)
        t = sent["until"]
        while t < end:
            nxt = min(t + every, end)
            samples = []
            for d, p in PORTS:
                ber = ber_at_fault if (d, p) == FAULTY else (lambda s: 5e-9)
                rows = series(d, p, start, nxt, ber=ber)
                samples += [s for s in rows if t.isoformat() <= s["ts"] < nxt.isoformat()]
            post(client, samples)
            roll(nxt)
            svc.alerts_evaluate(now=nxt)
            t = nxt
        sent["until"] = end
        return end

    return {"start": start, "run": run}


def _fault(windows):
    """A pre-FEC BER 400x the baseline inside ``windows`` (minutes from the start)."""

    def ber(t_s: float) -> float:
        return 2e-6 if any(lo * 60 <= t_s < hi * 60 for lo, hi in windows) else 5e-9

    return ber


def _open_the_alert(replay, ber):
    replay["run"](18, ber, every=timedelta(minutes=18))  # healthy: the baselines are learnt
    at = replay["run"](30, ber, every=timedelta(minutes=12))
    alert = Alert.objects.get(state=AlertState.OPEN)
    assert alert.rule == "fec_degradation" and list(alert.cables.values_list("label", flat=True)) == ["J-R1"]
    return alert, at


def test_a_clean_that_holds_is_judged_fixed_by_the_telemetry_that_follows(replay, user_with_role, settings):
    settings.CABLETRACK_REPAIR_HOLD_HOURS = 0.5
    ber = _fault([(18, 30)])  # the cleaning at minute 30 worked: clean from then on
    alert, at = _open_the_alert(replay, ber)
    advice = alert.recommendation
    tech = user_with_role("technician")
    repair, created = svc.repair_record(alert=alert, action="clean", end="B", actor=tech, now=at)
    assert created and repair.symptoms == "one" and repair.symptom_end == "b"
    alert.refresh_from_db()
    assert alert.watching_since == at and alert.replacement == "cleaning at End B of J-R1"

    # Ten minutes on: the clean window still holds pre-repair samples; nothing is decided.
    replay["run"](40, ber)
    assert svc.repairs_judge(now=replay["start"] + timedelta(minutes=40)).fixed == 0
    repair.refresh_from_db()
    assert repair.outcome == RepairOutcome.PENDING
    alert.refresh_from_db()
    assert alert.state == AlertState.OPEN

    # The window passes clean: the alert resolves; the hold (30 minutes) has not passed yet.
    replay["run"](55, ber)
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED and alert.returned_at is None
    svc.repairs_judge(now=alert.resolved_at + timedelta(minutes=10))
    repair.refresh_from_db()
    assert repair.outcome == RepairOutcome.PENDING

    # Clean for the hold time after it resolved: fixed, by the periodic task as beat runs it.
    replay["run"](95, ber)
    assert Alert.objects.get().state == AlertState.RESOLVED  # nothing fired again
    repairs_judge_task.apply()
    repair.refresh_from_db()
    assert repair.outcome == RepairOutcome.FIXED
    assert repair.judged_at == alert.resolved_at + timedelta(minutes=30)
    assert advice.startswith("Errors only at the B end")  # the rule's own words while nothing is known


def test_a_fault_that_returns_after_the_repair_is_judged_came_back(replay, user_with_role, settings):
    settings.CABLETRACK_REPAIR_HOLD_HOURS = 2
    ber = _fault([(18, 30), (60, 80)])  # clean after the re-seat, then the errors return
    alert, at = _open_the_alert(replay, ber)
    repair, _ = svc.repair_record(
        alert=alert, action="reseat", end="both", actor=user_with_role("technician"), now=at
    )

    replay["run"](55, ber)
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED  # it looked fixed for a while ...
    svc.repairs_judge(now=replay["start"] + timedelta(minutes=55))
    repair.refresh_from_db()
    assert repair.outcome == RepairOutcome.PENDING

    replay["run"](80, ber)  # ... then the same rule fires on the same link again
    alert.refresh_from_db()
    assert alert.state == AlertState.OPEN and alert.evidence["reopened"]
    report = svc.repairs_judge(now=replay["start"] + timedelta(minutes=80))
    repair.refresh_from_db()
    assert report.came_back == 1 and repair.outcome == RepairOutcome.CAME_BACK
    assert repair.outcome_reason == "the alert reopened"
    assert repair.judged_at.isoformat() == alert.evidence["reopened"][-1]

    # Judging again changes nothing (the task is idempotent).
    assert svc.repairs_judge(now=replay["start"] + timedelta(minutes=90)).came_back == 0
    assert Repair.objects.get().outcome == RepairOutcome.CAME_BACK
