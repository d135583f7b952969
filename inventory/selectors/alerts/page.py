"""The alert page: where to go for each end, which end to look at first, the path as it is now
(with each segment's state and next step from the one decision), and times said against "last seen".

Ends are named as the cable page names them: the side (A or B) of the cable whose plug sits in
that port's cage, with that cable's label ("End A of J-100"), so "End A" on an alert is the end
the technician sees as A on that cable's page. On a link through a panel the two ends are two
cables' ends; the one cable the alert names (and degrades) is said on the page (``one_cable``),
and a repair recorded at an end lands on that end's cable (``alert_repair_places``, read by
``services.repairs``; the choice itself is ``core.alert_ends``').
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q
from django.utils import timezone

from inventory.core.alert_ends import PluggedEnd, worst_end, worst_end_words
from inventory.core.collectives.spike import spike_words
from inventory.core.decision import alert_degrades
from inventory.core.words import evidence_rows, human_age
from inventory.models import Alert, CableEnd, CollectiveJob, LinkSegment, Port, Rack
from inventory.selectors.decision import cable_decisions


@dataclass
class AlertEnd:
    """One end of the alert's link (or its one port), where a technician finds it."""

    key: str  # the evidence's side: "a", "b" or "port"
    name: str  # as the cable page names it: "A", "B2", or "" when no cable is plugged
    cable: str  # the label of the cable whose plug is in this port's cage
    rack: Rack | None
    u: int | None
    device: str
    cage: str  # on the faceplate, "OSFP3" or "OSFP3/2"
    port: str  # the logical port the device and its telemetry name
    module: dict | None
    evidence: list[tuple[str, str]] = field(default_factory=list)
    worst: bool = False

    @property
    def title(self) -> str:
        side = f"End {self.name}" if self.name else "Port"
        return f"{side} · {self.device} {self.cage or self.port}"


def _plug_at(port: Port, ends: list[CableEnd]) -> CableEnd | None:
    for e in ends:
        if e.port_id == port.pk or (
            port.cage_id and e.cage_id == port.cage_id and e.connector == port.connector
        ):
            return e
    return None


def _swap_ends(text: str) -> str:
    return re.sub(r"\b([AB]) end\b", lambda m: f"{'B' if m.group(1) == 'A' else 'A'} end", text)


@dataclass
class _Plant:
    """What an alert's ends and path are now: its ports, its path (from the link's A port) and
    the cable ends plugged in those ports' cages."""

    sides: list[tuple[str, int]]
    ports: dict[int, Port]
    path: list[LinkSegment]
    plugs: list[CableEnd]

    def plugged(self) -> list[PluggedEnd]:
        """Each end the page shows with the cable end plugged there (``core.alert_ends``)."""
        out = []
        for key, pid in self.sides:
            p = self.ports.get(pid)
            plug = _plug_at(p, self.plugs) if p is not None else None
            if plug is not None:
                out.append(PluggedEnd(key, f"{plug.side}{plug.leg or ''}", plug.cable_id, plug.cable.label))
        return out


def _plant(alert: Alert) -> _Plant:
    link = alert.link
    if link is not None:
        sides = [("a", link.a_port_id), ("b", link.b_port_id)]
    elif alert.port_id:
        sides = [("port", alert.port_id)]
    else:
        sides = []
    ports = {
        p.pk: p
        for p in Port.objects.filter(pk__in=[pid for _, pid in sides]).select_related(
            "device__rack", "cage__transceiver__model__vendor"
        )
    }
    path = (
        list(LinkSegment.objects.filter(link=link).select_related("cable").order_by("seq"))
        if link is not None
        else []
    )
    plugs = list(
        CableEnd.objects.filter(active=True)
        .filter(Q(port_id__in=list(ports)) | Q(cage_id__in=[p.cage_id for p in ports.values() if p.cage_id]))
        .select_related("cable")
    )
    return _Plant(sides, ports, path, plugs)


def alert_repair_places(alert: Alert) -> tuple[list[PluggedEnd], list[tuple[int, str]]]:
    """The ends the alert page shows (with the cable end plugged at each) and the cables of its
    path, (id, label): what ``core.alert_ends.repair_target`` chooses a repair's cable from."""
    plant = _plant(alert)
    path = [(s.cable_id, s.cable.label) for s in plant.path]
    if not path and alert.cable_id:
        path = [(alert.cable_id, alert.cable.label)]
    return plant.plugged(), path


def _one_cable(alert: Alert, ends: list[AlertEnd], cables: list) -> dict | None:
    """On a link over several cables, the one cable the alert names (``core.alert_ends.
    alert_cable``, stored as ``alert.cable`` when it opened): the end of it the page shows, whether
    the alert marks it degraded (``core.decision.alert_degrades``), and the link's other cables,
    which keep their status."""
    if alert.cable_id is None or len(cables) < 2:
        return None
    return {
        "cable": alert.cable,
        "end": next((e for e in ends if e.cable == alert.cable.label), None),
        "degrades": alert_degrades(alert.rule, alert.severity) and not alert.silenced,
        "others": [c.label for c in cables if c.pk != alert.cable_id],
        "n": next((i for i, c in enumerate(cables, start=1) if c.pk == alert.cable_id), None),
        "of": len(cables),
    }


def alert_page(alert: Alert, *, now: datetime | None = None) -> dict:
    """Everything the alert page shows besides the alert's own fields."""
    now = now or timezone.now()
    ev = alert.evidence or {}
    plant = _plant(alert)
    sides, ports, path, plugs = plant.sides, plant.ports, plant.path, plant.plugs
    cables = [s.cable for s in path]
    evidence_ends = ev.get("ends") or {}
    # Evidence said per end of the link ({"a": true, "b": false}) goes on that end's card.
    per_end = {
        k: v
        for k, v in ev.items()
        if isinstance(v, dict) and v and set(v) <= {"a", "b"} and k not in ("ports", "modules", "ends")
    }
    worst = worst_end(alert.rule, evidence_ends)
    ends: list[AlertEnd] = []
    for key, pid in sides:
        p = ports.get(pid)
        if p is None:
            continue
        plug = _plug_at(p, plugs)
        module = (ev.get("modules") or {}).get(key)
        xcvr = getattr(p.cage, "transceiver", None) if p.cage_id else None
        if xcvr is not None:
            module = {
                "serial": xcvr.serial,
                "part_number": xcvr.model.part_number,
                "vendor": xcvr.model.vendor.name,
            }
        cage = ""
        if p.cage_id:
            cage = p.cage.name + (f"/{p.connector}" if (p.connector or 1) > 1 else "")
        ends.append(
            AlertEnd(
                key=key,
                name=f"{plug.side}{plug.leg or ''}" if plug else "",
                cable=plug.cable.label if plug else "",
                rack=p.device.rack,
                u=p.device.position_u,
                device=p.device.name,
                cage=cage,
                port=p.name,
                module=module,
                evidence=evidence_rows(
                    {**(evidence_ends.get(key) or {}), **{k: v[key] for k, v in per_end.items() if key in v}}
                ),
                worst=key == worst,
            )
        )
    # Evidence of an end the alert names no port for (an alert on a cable alone): its own card.
    shown = {e.key for e in ends}
    for key, rows in evidence_ends.items():
        if key not in shown and isinstance(rows, dict):
            name = key.upper() if key in ("a", "b") else ""
            ends.append(AlertEnd(key, name, "", None, None, "", "", "", None, evidence_rows(rows)))
    # The cable page's order: its A end first.
    ends.sort(key=lambda e: (e.name or "Z", e.key))
    decisions = cable_decisions(cables=cables, now=now) if cables else {}
    last_tests = {s["cable_id"]: s.get("last_test") for s in ev.get("segments") or [] if s.get("cable_id")}
    rows = [
        {
            "n": i,
            "cable": c,
            "suspect": alert.cable_id == c.pk,
            "decision": decisions.get(c.pk),
            "last_test": last_tests.get(c.pk),
        }
        for i, c in enumerate(cables, start=1)
    ]
    # A spike's job as its launcher registered it: its name, size and hosts (one query).
    collective = ev.get("collective") or {}
    job_id = collective.get("job")
    job = (
        CollectiveJob.objects.filter(job_id=job_id)
        .annotate(hosts=Count("ranks__host", distinct=True))
        .first()
        if job_id
        else None
    )
    # The rule's words say "A end" for the link's first port; say it as the cable page does.
    names = {e.key: e.name for e in ends}
    swap = names.get("a") == "B" and names.get("b") == "A"
    age = now - alert.updated_at
    hours = age.total_seconds() / 3600
    stale = hours >= 1
    return {
        "ends": ends,
        "job": job,
        # The spike in the words of its summary (``spike_words``), from the figures it kept.
        "spike_words": (
            spike_words(slowest_us=collective["slowest_us"], baseline_us=collective["baseline_us"])
            if collective.get("slowest_us") and collective.get("baseline_us")
            else ""
        ),
        "worst_end": next((e for e in ends if e.worst), None),
        "worst_words": worst_end_words(alert.rule),
        "one_cable": _one_cable(alert, ends, cables),
        "path_rows": rows,
        "moved_from": alert.moved_from if alert.moved_from_id else None,
        "summary": _swap_ends(alert.summary) if swap else alert.summary,
        "recommendation": _swap_ends(alert.recommendation) if swap else alert.recommendation,
        "last_seen_age": human_age(age.total_seconds()),
        "stale": stale,
        "evidence_extra": evidence_rows({k: v for k, v in ev.items() if k != "link" and k not in per_end}),
        "link_rows": evidence_rows(ev.get("link") or {}),
    }
