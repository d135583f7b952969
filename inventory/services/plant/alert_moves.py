"""Alerts follow the physical truth: a replacement moves the open alerts of the links it touches.

* A cable replaced (``cable_replace``): the old cable's links are re-traced onto new ``Link``
  rows over the new cable. Each open alert on a link through the old cable (or naming it as the
  suspect or a segment) moves to the new link and the new cable: its key follows the link (so
  the next evaluation updates it instead of opening a second alert), ``moved_from`` keeps the
  old cable (its page says where its alerts went), and its summary names the new cable.
* A module swapped (``transceiver_swap``): the open alerts of the links through the cage stay on
  their link and note which module replaced which.

Either way the replacement or swap is recorded as a repair on each alert it moved, in the same
transaction (``services.repairs.repairs_record_by_part``: action ``replace_cable`` or
``swap_module``, the end, the symptoms, who), so the learning loop counts it; and the alert is on
watch after it (``watching_since``; "replaced, watching", "module swapped at End A, watching")
until the rule's clean window passes clean (it resolves) or the condition shows again after that
window (it reopens naming the new part): ``services.alerts.lifecycle`` does both. A move is not a
sighting: ``updated_at`` (last seen) stays when the condition was last seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from inventory.core.choices import AlertState, RepairAction, RepairEnd, RepairSource
from inventory.models import Alert, Cable, CableEnd, Cage, Link, LinkSegment, Port
from inventory.services.repairs import PartRepair, repairs_record_by_part


@dataclass
class _Moving:
    alert: Alert
    pair: tuple[int, int] | None  # the old link's port pair, to find the new link by


def alerts_on_cable(*, cable: Cable) -> list[_Moving]:
    """The open alerts a replacement of ``cable`` moves (read before the cable is retired)."""
    through = LinkSegment.objects.filter(cable=cable, link__active=True).values("link_id")
    alerts = (
        Alert.objects.filter(state=AlertState.OPEN)
        .filter(Q(cable=cable) | Q(cables=cable) | Q(link_id__in=through))
        .select_related("link")
        .distinct()
        .order_by("pk")
    )
    return [_Moving(a, (a.link.a_port_id, a.link.b_port_id) if a.link_id else None) for a in alerts]


def alerts_follow_cable(
    *, moving: list[_Moving], old: Cable, new: Cable, now: datetime, actor=None, reason: str = ""
) -> int:
    """Move ``moving`` (``alerts_on_cable`` of ``old``, read before the replacement) to ``new``,
    and record the replacement as the repair on each (by ``actor``)."""
    if not moving:
        return 0
    pairs = {m.pair for m in moving if m.pair}
    new_links = {
        (link.a_port_id, link.b_port_id): link
        for link in Link.objects.filter(active=True, segments__cable=new).filter(
            Q(*[Q(a_port_id=a, b_port_id=b) for a, b in pairs], _connector=Q.OR) if pairs else Q(pk__in=[])
        )
    }
    through = Alert.cables.through
    for m in moving:
        a = m.alert
        link = new_links.get(m.pair) if m.pair else None
        if link is not None and a.link_id != link.pk:
            old_suffix = f":link:{a.link_id}"
            if a.key.endswith(old_suffix):
                key = a.key[: -len(old_suffix)] + f":link:{link.pk}"
                if not Alert.objects.filter(key=key, state=AlertState.OPEN).exists():
                    a.key = key
            a.link = link
        if a.cable_id in (None, old.pk):
            a.cable = new
        a.moved_from = old
        a.summary = a.summary.replace(old.label, new.label)[:300]
        a.recommendation = a.recommendation.replace(old.label, new.label)[:500]
    Alert.objects.bulk_update(
        [m.alert for m in moving],
        [
            "key",
            "link",
            "cable",
            "moved_from",
            "summary",
            "recommendation",
        ],
    )
    ids = [m.alert.pk for m in moving]
    through.objects.filter(alert_id__in=ids, cable_id=old.pk).delete()
    through.objects.bulk_create([through(alert_id=i, cable_id=new.pk) for i in ids], ignore_conflicts=True)
    repairs_record_by_part(
        repairs=[PartRepair(i, RepairEnd.BOTH, f"{old.label} by {new.label}", cable=old) for i in ids],
        action=RepairAction.REPLACE_CABLE,
        source=RepairSource.REPLACE,
        note=f"Recorded by the cable replacement{': ' + reason if reason else ''}"[:200],
        actor=actor,
        now=now,
    )
    return len(ids)


def alerts_follow_module(
    *, cage: Cage, old_serial: str, new_serial: str, now: datetime, actor=None, notes: str = ""
) -> int:
    """A module swapped in ``cage``: the open alerts of the links through it record the swap as
    their repair (at the end of the cable plugged into that cage, as the alert page names it)
    and watch."""
    ports = dict(Port.objects.filter(cage=cage).values_list("pk", "connector"))
    alerts = list(
        Alert.objects.filter(state=AlertState.OPEN, link__active=True)
        .filter(Q(link__a_port_id__in=list(ports)) | Q(link__b_port_id__in=list(ports)))
        .values_list("pk", "link__a_port_id", "link__b_port_id")
    )
    if not alerts:
        return 0
    plugs = {e.connector: e for e in CableEnd.objects.filter(active=True, cage=cage).select_related("cable")}
    detail = f"{cage.device.name} {cage.name}: {old_serial or '(none)'} by {new_serial}"
    repairs = []
    for pk, a_port, b_port in alerts:
        port = a_port if a_port in ports else b_port
        plug = plugs.get(ports[port]) or plugs.get(None)
        side = plug.side[:1] if plug is not None else ""
        if side in (RepairEnd.A, RepairEnd.B):
            repairs.append(PartRepair(pk, side, detail, cable=plug.cable))
        else:
            repairs.append(PartRepair(pk, RepairEnd.NA, detail))
    repairs_record_by_part(
        repairs=repairs,
        action=RepairAction.SWAP_MODULE,
        source=RepairSource.SWAP,
        note=f"Recorded by the module swap{': ' + notes if notes else ''}"[:200],
        actor=actor,
        now=now,
    )
    return len(repairs)
