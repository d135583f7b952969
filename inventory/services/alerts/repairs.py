"""Repairs that learn (issue 35): record a repair on an alert, judge it by the telemetry that
follows, and keep the open alerts' recommendations on the best-measured action.

* ``repair_record``: one service for the alert page's form and ``POST /api/alerts/<id>/repairs/``.
  The alert must be open. The repair puts the alert on watch, as a replacement does
  (``watching_since``): it resolves only once the rule's clean window has passed clean after the
  repair, and a condition seen past that window marks it "back" (``returned_at``).
* ``repairs_judge``: the periodic task's body; the verdict is ``core.repairs.repair_outcome``
  (through ``selectors.alerts.repairs.repair_verdicts``). Idempotent: only pending rows change,
  each once, to a verdict that the same facts always give.
* ``recommendations_refresh``: the open alerts' ``recommendation`` from their ranked actions
  (the rule's own words while its first step ranks first).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction

from inventory.core import repairs as core
from inventory.core.choices import AlertState, RepairAction, RepairEnd, RepairOutcome
from inventory.models import Alert, Repair
from inventory.selectors.alerts import repairs as selectors

# The same repair (alert, action, end, person) again within this: a double tap, not a second repair.
DOUBLE_TAP = timedelta(minutes=5)


def repair_record(
    *, alert: Alert, action: str, end: str, note: str = "", actor, now: datetime
) -> tuple[Repair, bool]:
    """Record what was done about ``alert``. Returns (repair, created); refuses a resolved alert."""
    errors = {}
    if action not in RepairAction.values:
        errors["action"] = f"Unknown action {action!r}: use one of {', '.join(RepairAction.values)}."
    if end not in RepairEnd.values:
        errors["end"] = f"Unknown end {end!r}: use one of {', '.join(RepairEnd.values)}."
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        # Locked, so a repair and the rule run that resolves the alert do not cross.
        locked = Alert.objects.select_for_update().filter(pk=alert.pk).first()
        if locked is None or locked.state != AlertState.OPEN:
            raise ValidationError(
                {
                    "alert": "This alert is resolved: record a repair on an open alert (or on the alert that came back)."
                }
            )
        same = (
            Repair.objects.filter(
                alert=locked, action=action, end=end, done_by=actor if actor and actor.pk else None
            )
            .filter(done_at__gte=now - DOUBLE_TAP)
            .first()
        )
        if same is not None:
            return same, False
        ctx = selectors.repair_contexts([locked])[locked.pk]
        repair = Repair.objects.create(
            alert=locked,
            rule=locked.rule,
            action=action,
            end=end,
            note=(note or "").strip()[:300],
            done_by=actor if actor and actor.pk else None,
            done_at=now,
            symptoms=ctx.symptoms,
            symptom_end=ctx.symptom_end,
            site_id=ctx.site_id,
            module_model_id=ctx.module_model_id,
            vendor_id=ctx.vendor_id,
        )
        Alert.objects.filter(pk=locked.pk).update(
            watching_since=now, returned_at=None, replacement=core.repair_words(action, end)[:200]
        )
    return repair, True


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
