"""The alert page: where to go for each end, which end to look at first, the path as it is now
(with each segment's state and next step from the one decision), and times said against "last seen".

Ends are named as the cable page names them: the side (A or B) of the cable whose plug sits in
that port's cage, so "End A" on an alert is the end the technician sees as A on the cable page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q
from django.utils import timezone

from inventory.core.collectives.spike import spike_words
from inventory.core.words import evidence_rows, human_age
from inventory.models import Alert, CableEnd, CollectiveJob, LinkSegment, Port, Rack
from inventory.selectors.decision import cable_decisions

# What makes one end worse than the other, per rule (keys of that rule's per-end evidence):
# the end with the larger sum is where to look first. The words say what that end is.
_END_SCORE = {
    "link_flap": (("link_down", "error_recovery"), "the end that flaps (reports the link-down events)"),
    "fec_degradation": (("value",), "the end whose receiver sees the errors"),
    "fec_tail": (("codewords_over_80pct", "codewords_40_80pct"), "the end whose receiver sees the errors"),
    "fec_uncorrectable": (("uncorrectable_cw",), "the end whose receiver sees the errors"),
    "rx_power_drift": (("worst_drop_db",), "the end whose receive power dropped"),
    "link_degraded": ((), "the end running below its speed or width"),
    "pfc_storm": (("pause_frames_sent_per_s", "burst_sent_per_s"), "the end that sends the pause frames"),
    "tail_latency_spike": ((), "either end"),  # the FEC evidence is the suspect link's, both ends
}


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


def _worst_end(rule: str, ends: dict) -> str | None:
    keys, _ = _END_SCORE.get(rule, ((), ""))
    sides = [s for s in ("a", "b") if isinstance(ends.get(s), dict)]
    if len(sides) == 1:
        return sides[0]
    if not keys or len(sides) != 2:
        return None
    score = {s: sum(float(ends[s].get(k) or 0) for k in keys) for s in sides}
    if score["a"] == score["b"]:
        return None
    return max(sides, key=lambda s: score[s])


def _swap_ends(text: str) -> str:
    return re.sub(r"\b([AB]) end\b", lambda m: f"{'B' if m.group(1) == 'A' else 'A'} end", text)


def alert_page(alert: Alert, *, now: datetime | None = None) -> dict:
    """Everything the alert page shows besides the alert's own fields."""
    now = now or timezone.now()
    ev = alert.evidence or {}
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
    cables = [s.cable for s in path]
    plugs = list(
        CableEnd.objects.filter(active=True)
        .filter(Q(port_id__in=list(ports)) | Q(cage_id__in=[p.cage_id for p in ports.values() if p.cage_id]))
        .select_related("cable")
    )
    evidence_ends = ev.get("ends") or {}
    # Evidence said per end of the link ({"a": true, "b": false}) goes on that end's card.
    per_end = {
        k: v
        for k, v in ev.items()
        if isinstance(v, dict) and v and set(v) <= {"a", "b"} and k not in ("ports", "modules", "ends")
    }
    worst = _worst_end(alert.rule, evidence_ends)
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
        "worst_words": _END_SCORE.get(alert.rule, ((), "the end to look at first"))[1],
        "path_rows": rows,
        "moved_from": alert.moved_from if alert.moved_from_id else None,
        "summary": _swap_ends(alert.summary) if swap else alert.summary,
        "recommendation": _swap_ends(alert.recommendation) if swap else alert.recommendation,
        "last_seen_age": human_age(age.total_seconds()),
        "stale": stale,
        "evidence_extra": evidence_rows({k: v for k, v in ev.items() if k != "link" and k not in per_end}),
        "link_rows": evidence_rows(ev.get("link") or {}),
    }
