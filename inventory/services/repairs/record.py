"""Record a repair on an alert: one path for the alert page's form, ``POST /api/alerts/<id>/repairs/``
and the replace-cable and swap-module forms (issue 35, "repairs that learn").

A repair puts its alert on watch (``watching_since``, with the action and end the pages say it
with, ``core.repairs.watching_words``): it resolves only once the rule's clean window has
passed clean after the repair, and a condition seen past that window marks it "back".

No duplicates (the rule, tested in ``tests/inventory/services/alerts/test_repairs_by_part.py``):

* A double tap: the same action at the same end on the same alert by the same person within
  ``DOUBLE_TAP`` (5 minutes) is the first repair.
* The same visit: a replacement or swap records its repair on the open alerts of the links it
  touches (``repairs_record_by_part``). The same action on the same alert by the same person
  within ``VISIT`` (an hour) of it, before or after, recorded on the alert page, is that repair,
  not a second one: for a cable replacement at any end (a cable is replaced whole), for a module
  swap at the same end or with no end given. A different action, a different end of a swap,
  another person or a later hour is a repair of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from inventory.core import repairs as core
from inventory.core.alert_ends import RepairTargetError, repair_target
from inventory.core.choices import AlertState, RepairAction, RepairEnd, RepairSource
from inventory.models import Alert, Cable, Repair
from inventory.selectors.alerts import repairs as selectors
from inventory.selectors.alerts.page import alert_repair_places
from inventory.services.journal import journal_write

DOUBLE_TAP = timedelta(minutes=5)
VISIT = timedelta(hours=1)


def _person(actor):
    return actor if actor is not None and getattr(actor, "pk", None) else None


def _same_visit(
    *, alert_id: int, action: str, end: str, cable_id: int | None, person, now: datetime, sources
) -> Repair | None:
    """A repair of ``sources`` this visit that the one being recorded repeats (see the module)."""
    qs = Repair.objects.filter(
        alert_id=alert_id, action=action, done_by=person, source__in=sources, done_at__gte=now - VISIT
    ).filter(done_at__lte=now + VISIT)
    if action != RepairAction.REPLACE_CABLE and end != RepairEnd.NA:
        qs = qs.filter(Q(end=end, cable_id=cable_id) | Q(end=RepairEnd.NA))
    return qs.order_by("done_at", "id").first()


def _create(
    *,
    alert: Alert,
    action: str,
    end: str,
    cable_id: int | None,
    note: str,
    person,
    now: datetime,
    source: str,
    ctx,
):
    return Repair.objects.create(
        alert=alert,
        rule=alert.rule,
        action=action,
        end=end,
        cable_id=cable_id,
        note=(note or "").strip()[:300],
        source=source,
        done_by=person,
        done_at=now,
        symptoms=ctx.symptoms,
        symptom_end=ctx.symptom_end,
        site_id=ctx.site_id,
        module_model_id=ctx.module_model_id,
        vendor_id=ctx.vendor_id,
    )


def watch_fields(*, action: str, end: str, cable: str, detail: str, now: datetime) -> dict:
    """The alert's fields on watch after ``action`` at ``end`` of ``cable`` (its label, or ""):
    one writer for the repair form, the replacement and the swap, so the pages say it one way."""
    return {
        "watching_since": now,
        "returned_at": None,
        "replacement": core.repair_words(action, end, detail, cable)[:200],
        "watch_action": action,
        "watch_end": end,
        "watch_cable": cable,
    }


def repair_record(
    *,
    alert: Alert,
    action: str,
    end: str,
    cable: str = "",
    note: str = "",
    actor,
    now: datetime,
    journal: bool = True,
) -> tuple[Repair, bool]:
    """Record what was done about ``alert`` (the alert page, the API, the cable page's "Re-seated
    / cleaned" form) at ``end`` of ``cable`` (a label; the page's form always names it). The cable
    end it lands on is ``core.alert_ends.repair_target``'s, from the ends the alert page shows:
    "End A" is the end the page calls End A, on the cable plugged there. Returns (repair,
    created); refuses a resolved alert and an end the alert does not show. A double tap, or the
    repair a replacement or swap by the same person recorded this visit, answers the repair
    recorded already.

    A repair recorded is one entry in the journal of the cable it names (with no cable named:
    the alert's cable), so the cable's history says what was done to it: "re-seated at End A of
    C000601 for alert #9: <note>" (``core.repairs.journal_words``). ``journal=False``: the caller
    writes it (the cable page's "Re-seated / cleaned" form: one cleaning recorded on several
    alerts is one entry, ``services.plant.fieldwork.cable_serviced``)."""
    errors = {}
    if action not in RepairAction.values:
        errors["action"] = f"Unknown action {action!r}: use one of {', '.join(RepairAction.values)}."
    if end not in RepairEnd.values:
        errors["end"] = f"Unknown end {end!r}: use one of {', '.join(RepairEnd.values)}."
    if errors:
        raise ValidationError(errors)
    plugged, path = alert_repair_places(alert)
    try:
        cable_id = repair_target(plugged=plugged, path=path, end=end, cable=cable)
    except RepairTargetError as exc:
        raise ValidationError({"end": str(exc)}) from exc
    label = dict(path).get(cable_id) or next((p.label for p in plugged if p.cable_id == cable_id), "")
    person = _person(actor)
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
            Repair.objects.filter(alert=locked, action=action, end=end, cable_id=cable_id, done_by=person)
            .filter(done_at__gte=now - DOUBLE_TAP)
            .first()
        ) or _same_visit(
            alert_id=locked.pk,
            action=action,
            end=end,
            cable_id=cable_id,
            person=person,
            now=now,
            sources=(RepairSource.REPLACE, RepairSource.SWAP),
        )
        if same is not None:
            return same, False
        ctx = selectors.repair_contexts([locked])[locked.pk]
        repair = _create(
            alert=locked,
            action=action,
            end=end,
            cable_id=cable_id,
            note=note,
            person=person,
            now=now,
            source=RepairSource.ALERT,
            ctx=ctx,
        )
        Alert.objects.filter(pk=locked.pk).update(
            **watch_fields(action=action, end=end, cable=label, detail="", now=now)
        )
        on = cable_id or locked.cable_id or (path[0][0] if path else None)
        if journal and on is not None:
            journal_write(
                cable_ids=[on],
                kind=core.journal_kind(action),
                text=core.journal_words(action=action, end=end, cable=label, alert_id=locked.pk, note=note),
                actor=person,
                now=now,
            )
    return repair, True


@dataclass(frozen=True)
class PartRepair:
    """A replacement or swap as the repair it is on one open alert it moved."""

    alert_id: int
    end: str  # RepairEnd: the end of the cable as the alert page names it
    detail: str  # "J-102 by R-102", "gpu-0001 OSFP1: s/n X by Y"
    cable: Cable | None = None  # the cable whose end it was (the one plugged in the swapped cage)


def repairs_record_by_part(
    *, repairs: list[PartRepair], action: str, source: str, note: str, actor, now: datetime
) -> list[Repair]:
    """Record the replacement or swap on each open alert it moved, in the caller's transaction,
    and put each on watch after it. An alert whose repair the same person recorded on the alert
    page this visit keeps that one (no second row); it still watches from now. Returns the
    repairs created."""
    if not repairs:
        return []
    person = _person(actor)
    by_id = {r.alert_id: r for r in repairs}
    alerts = list(
        Alert.objects.select_for_update().filter(pk__in=list(by_id), state=AlertState.OPEN).order_by("pk")
    )
    contexts = selectors.repair_contexts(alerts)
    created = []
    for a in alerts:
        r = by_id[a.pk]
        cable_id = r.cable.pk if r.cable is not None else None
        Alert.objects.filter(pk=a.pk).update(
            **watch_fields(
                action=action,
                end=r.end,
                cable=r.cable.label if r.cable is not None and action != RepairAction.REPLACE_CABLE else "",
                detail=r.detail,
                now=now,
            )
        )
        if _same_visit(
            alert_id=a.pk,
            action=action,
            end=r.end,
            cable_id=cable_id,
            person=person,
            now=now,
            sources=(RepairSource.ALERT,),
        ):
            continue
        created.append(
            _create(
                alert=a,
                action=action,
                end=r.end,
                cable_id=cable_id,
                note=f"{note}: {r.detail}" if note else r.detail,
                person=person,
                now=now,
                source=source,
                ctx=contexts[a.pk],
            )
        )
    return created
