"""Naming what an alert is about: the port pair, the path's segments, the modules at the ends,
the segments' last tests, and the suspect segment; read in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass, field

from inventory.core.alert_ends import alert_cable
from inventory.core.choices import AlertRule, CableKind
from inventory.core.telemetry import rules as engine
from inventory.models import Cable, CableEnd, CableTest, Device, Link, LinkSegment, Port

PORT_RELATED = (
    "device__rack__row__room__site",
    "cage__transceiver__model__vendor",
)


def _port_label(p: Port | None) -> str:
    return f"{p.device.name}:{p.name}" if p else "?"


def _cage_label(p: Port) -> str | None:
    """The cage as the faceplate and the cable page name it: "gpu-0001 OSFP2/2" for the second
    port of a twin-port cage."""
    if not p.cage_id:
        return None
    return f"{p.device.name} {p.cage.name}" + (f"/{p.connector}" if (p.connector or 1) > 1 else "")


def _module(p: Port | None, sealed: dict[int, CableEnd] | None = None) -> dict | None:
    """The module in the port's cage or, for a DAC/ACC/AOC plugged into it, that cable's end
    (its EEPROM: part and serial of that end); None when the cage holds neither."""
    if p is None or not p.cage_id:
        return None
    x = getattr(p.cage, "transceiver", None)
    if x is None:
        e = (sealed or {}).get(p.cage_id)
        if e is None:
            return None
        c = e.cable
        return {
            "serial": (c.serial_a if e.side == "A" else c.serial_b) or "",
            "part_number": c.part_number,
            "vendor": c.vendor.name if c.vendor_id else "",
            "transceiver_id": None,
            "cable": c.label,
            "cable_kind": c.kind,
            "end": e.side,
            "cage": f"{p.device.name} {p.cage.name}",
        }
    return {
        "serial": x.serial,
        "part_number": x.model.part_number,
        "vendor": x.model.vendor.name,
        "transceiver_id": x.pk,
        "cage": f"{p.device.name} {p.cage.name}",
    }


@dataclass
class FindingContext:
    links: dict[int, Link]
    ports: dict[int, Port]
    segments: dict[int, list[Cable]]
    last_tests: dict[int, dict]
    sealed: dict[int, CableEnd] = field(default_factory=dict)  # cage id -> DAC/ACC/AOC end in it
    hosts: dict[int, Device] = field(default_factory=dict)  # job hosts named by collective findings


def findings_context(findings: list[engine.Finding]) -> FindingContext:
    link_ids = {f.link_id for f in findings if f.link_id is not None}
    link_ids |= {
        s["link_id"]
        for f in findings
        if f.rule == AlertRule.TAIL_LATENCY_SPIKE
        for s in f.evidence.get("suspects", [])
    }
    port_ids = {f.port_id for f in findings if f.port_id is not None}
    host_ids = {
        h for f in findings if f.rule == AlertRule.TAIL_LATENCY_SPIKE for h in f.evidence.get("host_ids", [])
    }
    return links_context(link_ids=link_ids, port_ids=port_ids, host_ids=host_ids)


def links_context(
    *, link_ids: set[int], port_ids: set[int] = frozenset(), host_ids: set[int] = frozenset()
) -> FindingContext:
    """The links and ports named, their segments, last tests and modules, in a fixed number of queries."""
    links = {
        lk.pk: lk
        for lk in Link.objects.filter(pk__in=link_ids).select_related(
            *(f"a_port__{r}" for r in PORT_RELATED), *(f"b_port__{r}" for r in PORT_RELATED)
        )
    }
    port_ids = set(port_ids) - {p for lk in links.values() for p in (lk.a_port_id, lk.b_port_id)}
    ports = {p.pk: p for p in Port.objects.filter(pk__in=port_ids).select_related(*PORT_RELATED)}
    for lk in links.values():
        ports[lk.a_port_id] = lk.a_port
        ports[lk.b_port_id] = lk.b_port
    segments: dict[int, list[Cable]] = {}
    for seg in (
        LinkSegment.objects.filter(link_id__in=links).select_related("cable").order_by("link_id", "seq")
    ):
        segments.setdefault(seg.link_id, []).append(seg.cable)
    cable_ids = {c.pk for cs in segments.values() for c in cs}
    last_tests: dict[int, dict] = {}
    for t in CableTest.objects.filter(cable_id__in=cable_ids).order_by("cable_id", "tested_at"):
        last_tests[t.cable_id] = {
            "date": t.tested_at.date().isoformat(),
            "kind": t.kind,
            "loss_db": t.loss_db,
            "budget_db": t.budget_db,
            "margin_db": t.margin_db,
            "verdict": t.verdict,
        }
    cage_ids = {p.cage_id for p in ports.values() if p.cage_id}
    sealed = {
        e.cage_id: e
        for e in CableEnd.objects.filter(
            active=True, cage_id__in=cage_ids, cable__kind__in=CableKind.sealed()
        ).select_related("cable__vendor")
    }
    hosts = (
        {d.pk: d for d in Device.objects.filter(pk__in=host_ids).select_related("rack__row__room__site")}
        if host_ids
        else {}
    )
    return FindingContext(links, ports, segments, last_tests, sealed, hosts)


def link_brief(link_id: int, ctx: FindingContext) -> dict | None:
    """One link as an alert names a suspect: both ends, the cable to look at first and every
    segment, both modules."""
    lk = ctx.links.get(link_id)
    if lk is None:
        return None
    cables = ctx.segments.get(lk.pk, [])
    cable = _suspect(cables, ctx.last_tests, rule=AlertRule.TAIL_LATENCY_SPIKE, ends={})
    return {
        "link_id": lk.pk,
        "a": _port_label(lk.a_port),
        "b": _port_label(lk.b_port),
        "a_cage": _cage_label(lk.a_port),
        "b_cage": _cage_label(lk.b_port),
        "cable": cable.label if cable else None,
        "cable_id": cable.pk if cable else None,
        "segments": [c.label for c in cables],
        "modules": {"a": _module(lk.a_port, ctx.sealed), "b": _module(lk.b_port, ctx.sealed)},
    }


def _suspect(cables: list[Cable], last_tests: dict[int, dict], *, rule: str, ends: dict) -> Cable | None:
    """The one cable the alert names and degrades (``core.alert_ends.alert_cable``): the cable
    at the end its evidence names, else the segment with the least test margin, else the first."""
    cable, _ = alert_cable(
        rule=rule, ends=ends, path=cables, margin=lambda c: (last_tests.get(c.pk) or {}).get("margin_db")
    )
    return cable


def finding_describe(f: engine.Finding, ctx: FindingContext) -> dict:
    if f.rule == AlertRule.TAIL_LATENCY_SPIKE:
        return _spike_describe(f, ctx)
    lk = ctx.links.get(f.link_id) if f.link_id is not None else None
    if lk is not None:
        a, b = lk.a_port, lk.b_port
        pair = f"{_port_label(a)} <-> {_port_label(b)}"
        cables = ctx.segments.get(lk.pk, [])
        devices = [a.device, b.device]
    else:
        a = ctx.ports.get(f.port_id)
        b = None
        pair = _port_label(a)
        cables = []
        devices = [a.device] if a else []
    if f.rule == AlertRule.PFC_STORM:
        # Name the end that sends the pauses first: that host (or switch) is where to look.
        sender_id = f.evidence.get("sender_port_id")
        sender = ctx.ports.get(sender_id) if sender_id is not None else None
        who = f"sent by {_port_label(sender)}" if sender else "sent by an unrecorded neighbour"
        pair = f"{who} ({pair})"
    rule_label = AlertRule(f.rule).label if f.rule in AlertRule.values else f.rule
    recommendation, code = f.recommendation, f.recommendation_code
    if f.rule in engine.PHYSICAL_RULES and len(cables) == 1 and cables[0].kind in CableKind.sealed():
        # A DAC/ACC/AOC: its transceivers are sealed into the cable; "replace the module" means
        # replacing the cable, and there is no connector to clean on the path.
        c = cables[0]
        recommendation = (
            f"Both ends are the sealed {c.get_kind_display()} {c.label}: re-seat both plugs; if errors "
            f"persist, replace {c.label} (its transceivers are part of the cable)."
        )
        code = "replace_cable"
    evidence = {
        "ports": {"a": _port_label(a), "b": _port_label(b) if b else None},
        "link": None
        if lk is None
        else {"id": lk.pk, "pmd": lk.pmd, "fec": lk.fec, "class": lk.link_class, "speed_gbps": lk.speed_gbps},
        "segments": [
            {
                "seq": i,
                "cable_id": c.pk,
                "label": c.label,
                "kind": c.kind,
                "last_test": ctx.last_tests.get(c.pk),
            }
            for i, c in enumerate(cables)
        ],
        "modules": {"a": _module(a, ctx.sealed), "b": _module(b, ctx.sealed)},
        "ends": f.ends,
        **f.evidence,
        "recommendation_code": code,
        "advice": recommendation[:500],  # the rule's own words (the alert's recommendation may rank repairs)
    }
    return {
        "summary": f"{rule_label}: {pair}: {f.headline}"[:300],
        "recommendation": recommendation[:500],
        "evidence": evidence,
        "cables": cables,
        "suspect": _suspect(cables, ctx.last_tests, rule=f.rule, ends=f.ends)
        if f.rule in engine.PHYSICAL_RULES
        else None,
        "devices": devices,
        "port": a if f.port_id is None else ctx.ports.get(f.port_id, a),
    }


def _spike_describe(f: engine.Finding, ctx: FindingContext) -> dict:
    """A ``tail_latency_spike``: the job and communicator in the summary; the most likely
    cable's link (when physical evidence names one) as the alert's link, path and modules; the
    ranked suspects, each with both ends, its cable and modules, in the evidence."""
    lk = ctx.links.get(f.link_id) if f.link_id is not None else None
    cables = ctx.segments.get(lk.pk, []) if lk is not None else []
    suspects = []
    for s in f.evidence.get("suspects", []):
        brief = link_brief(s["link_id"], ctx) or {}
        suspects.append({**s, **brief})
    hosts = [ctx.hosts[h] for h in f.evidence.get("host_ids", []) if h in ctx.hosts]
    evidence = {
        "ports": {"a": _port_label(lk.a_port), "b": _port_label(lk.b_port)} if lk is not None else {},
        "link": None if lk is None else {"id": lk.pk, "pmd": lk.pmd, "fec": lk.fec, "class": lk.link_class},
        "segments": [
            {
                "seq": i,
                "cable_id": c.pk,
                "label": c.label,
                "kind": c.kind,
                "last_test": ctx.last_tests.get(c.pk),
            }
            for i, c in enumerate(cables)
        ],
        "modules": {"a": _module(lk.a_port, ctx.sealed), "b": _module(lk.b_port, ctx.sealed)}
        if lk is not None
        else {},
        "ends": {},
        "collective": f.evidence.get("collective", {}),
        "suspects": suspects,
        "recommendation_code": f.recommendation_code,
    }
    devices = [lk.a_port.device, lk.b_port.device] if lk is not None else hosts
    headline, recommendation = f.headline, f.recommendation
    top = suspects[0] if suspects and lk is not None and suspects[0].get("link_id") == lk.pk else None
    if top is not None:
        sure = f.evidence.get("collective", {}).get("sure", "")
        where = f"{top['a_cage'] or top['a']} ({top['a']}) <-> {top['b_cage'] or top['b']} ({top['b']})"
        headline = f"{headline}; most likely cable {top['cable']} {where} (sure: {sure})"
        # Each end by its cage and the module in it (the ports are in the summary): the rule's
        # reasons and the action after it must fit the 500 characters whole.
        ends = [
            (top[f"{side}_cage"] or top[side])
            + (f" (module {m['part_number']} s/n {m['serial']})" if (m := top["modules"].get(side)) else "")
            for side in ("a", "b")
        ]
        recommendation = f"Most likely cable {top['cable']} between {ends[0]} and {ends[1]} {recommendation}"
    evidence["advice"] = recommendation[:500]
    return {
        "summary": f"{AlertRule.TAIL_LATENCY_SPIKE.label}: {headline}"[:300],
        "recommendation": recommendation[:500],
        "evidence": evidence,
        "cables": cables,
        "suspect": _suspect(cables, ctx.last_tests, rule=f.rule, ends={}) if lk is not None else None,
        "devices": devices,
        "port": lk.a_port if lk is not None else None,
    }
