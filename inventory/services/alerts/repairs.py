"""Repairs that learn (issue 35): record a repair on an alert, judge it by the telemetry that
follows, and keep the open alerts' recommendations on the best-measured action.

* ``repair_record`` (``services.repairs``, re-exported): one service for the alert page's form
  and ``POST /api/alerts/<id>/repairs/``; the replace-cable and swap-module forms record theirs
  through the same module (``repairs_record_by_part``).
* ``repairs_judge``: the periodic task's body; the verdict is ``core.repairs.repair_outcome``
  (through ``selectors.alerts.repairs.repair_verdicts``). Idempotent: only pending rows change,
  each once, to a verdict that the same facts always give.
* ``recommendations_refresh``: the open alerts' ``recommendation`` from their ranked actions
  (the rule's own words while its first step ranks first).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from inventory.core import repairs as core
from inventory.core.choices import RepairOutcome
from inventory.models import Alert, Repair
from inventory.selectors.alerts import repairs as selectors
from inventory.services.repairs import repair_record

__all__ = ["JudgeReport", "recommendations_refresh", "repair_record", "repairs_judge"]


@dataclass
class JudgeReport:
    pending: int = 0
    fixed: int = 0
    came_back: int = 0
    recommendations: int = 0


def repairs_judge(*, now: datetime) -> JudgeReport:
    """Judge every pending repair by what its alert did since; refresh the recommendations of
    the open alerts whose rules gained outcomes. Reads only the pending repairs."""
    pending = list(
        Repair.objects.filter(outcome=RepairOutcome.PENDING).select_related("alert").order_by("done_at", "id")
    )
    report = JudgeReport(pending=len(pending))
    if not pending:
        return report
    verdicts = selectors.repair_verdicts(pending, now=now)
    judged = []
    for r in pending:
        v = verdicts[r.pk]
        if v.verdict == RepairOutcome.PENDING:
            continue
        r.outcome, r.judged_at, r.outcome_reason = v.verdict, v.at, v.reason[:200]
        judged.append(r)
    if not judged:
        return report
    with transaction.atomic():
        # Conditional (still pending), so a concurrent run cannot judge a row twice. One update
        # per newly judged repair: the pending rows, never the table.
        for r in judged:
            Repair.objects.filter(pk=r.pk, outcome=RepairOutcome.PENDING).update(
                outcome=r.outcome, judged_at=r.judged_at, outcome_reason=r.outcome_reason
            )
        report.fixed = sum(1 for r in judged if r.outcome == RepairOutcome.FIXED)
        report.came_back = len(judged) - report.fixed
        report.recommendations = recommendations_refresh(
            alerts=selectors.open_alerts_of_rules({r.rule for r in judged})
        )
    return report


def recommendations_refresh(*, alerts: list[Alert]) -> int:
    """Write each open alert's recommendation from its ranked actions; returns how many changed."""
    if not alerts:
        return 0
    contexts = selectors.repair_contexts(alerts)
    ranked = selectors.rankings(list(contexts.values()))
    changed = []
    for a in alerts:
        ctx = contexts[a.pk]
        words = core.recommendation_words(advice=ctx.advice, ranking=ranked[a.pk])
        ev = a.evidence or {}
        if words != a.recommendation or "advice" not in ev:
            a.recommendation = words
            a.evidence = {**ev, "advice": ctx.advice}
            changed.append(a)
    if changed:
        Alert.objects.bulk_update(changed, ["recommendation", "evidence"])
    return len(changed)
