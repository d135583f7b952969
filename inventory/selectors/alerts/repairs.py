"""Reads for repairs (issue 35): what an alert shows (its symptom key, site, module model), the
live verdict of repairs, the ranked actions, and the first-time-fix report. Set-based: a fixed
number of queries for any number of alerts or repairs; the decisions are ``core.repairs``'."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q
from django.db.models.functions import TruncMonth

from inventory.conf import app_settings
from inventory.core import repairs as core
from inventory.core.choices import SEVERITY_ORDER, AlertState, RepairOutcome
from inventory.core.decision import BLOCKING_SEVERITIES
from inventory.core.telemetry import rules as engine
from inventory.models import Alert, Cable, Link, Port, PortTelemetryState, Repair

_SITE = "device__rack__row__room__site_id"
JUDGED = (RepairOutcome.FIXED, RepairOutcome.CAME_BACK)


def rule_clean_window_s(rule: str) -> float:
    """Seconds of clean telemetry that settle an alert of ``rule`` (the default profile's window):
    the same window "replaced, watching" waits for."""
    return engine.clean_window_s(rule, engine.RuleConfig.from_dict(app_settings.alert_rules).default)


def hold_s() -> float:
    return float(app_settings.repair_hold_hours) * 3600.0


@dataclass(frozen=True, slots=True)
class RepairContext:
    """What a repair on this alert is counted under, and which prior row it starts from."""

    alert_id: int
    rule: str
    symptoms: str
    symptom_end: str
    site_id: int | None
    module_model_id: int | None
    vendor_id: int | None
    row: str
    advice: str  # the rule's own recommendation


def repair_contexts(alerts: list[Alert]) -> dict[int, RepairContext]:
    """Symptoms, site, module model and prior row of each alert, in four queries."""
    links = {
        pk: (a_port, b_port)
        for pk, a_port, b_port in Link.objects.filter(
            pk__in={a.link_id for a in alerts if a.link_id is not None}
        ).values_list("pk", "a_port_id", "b_port_id")
    }
    sides: dict[int, dict[str, int]] = {}
    for a in alerts:
        s: dict[str, int] = {}
        if a.link_id in links:
            s = {"a": links[a.link_id][0], "b": links[a.link_id][1]}
        elif a.port_id is not None:
            s = {"a": a.port_id}
        sides[a.pk] = s
    port_ids = {p for s in sides.values() for p in s.values()}
    ports = {
        pk: (site, model, vendor)
        for pk, site, model, vendor in Port.objects.filter(pk__in=port_ids).values_list(
            "pk", _SITE, "cage__transceiver__model_id", "cage__transceiver__model__vendor_id"
        )
    }
    flags = dict(
        PortTelemetryState.objects.filter(port_id__in=port_ids).values_list("port_id", "module_flags")
    )
    cable_vendor = dict(
        Cable.objects.filter(pk__in={a.cable_id for a in alerts if a.cable_id}).values_list("pk", "vendor_id")
    )
    out = {}
    for a in alerts:
        ev = a.evidence or {}
        s = sides[a.pk]
        symptoms, end = core.symptom_key(evidence=ev, rule=a.rule, flags=[flags.get(p) for p in s.values()])
        # The module model at the end that sees it (else either end), and a site of the alert.
        order = [end] if end in s else []
        order += [k for k in ("a", "b") if k in s and k not in order]
        site = next((ports[s[k]][0] for k in order if s[k] in ports and ports[s[k]][0]), None)
        model = next(
            ((ports[s[k]][1], ports[s[k]][2]) for k in order if s[k] in ports and ports[s[k]][1]), None
        )
        out[a.pk] = RepairContext(
            alert_id=a.pk,
            rule=a.rule,
            symptoms=symptoms,
            symptom_end=end,
            site_id=site,
            module_model_id=model[0] if model else None,
            vendor_id=model[1] if model else cable_vendor.get(a.cable_id),
            row=core.prior_row(advice_code=ev.get("recommendation_code", ""), evidence=ev),
            advice=ev.get("advice") or a.recommendation,
        )
    return out


# --- ranking -----------------------------------------------------------------------------------


def _scope_words(level: int) -> str:
    return (
        "this module model at this site, same symptoms",
        "this site, same symptoms",
        "every site, same symptoms",
        "every repair on this rule",
    )[level]


def rankings(contexts: list[RepairContext]) -> dict[int, core.Ranking]:
    """The ranked actions of each alert, from one aggregate query over the judged repairs of
    their rules. The narrowest scope with ``MIN_SCOPE_REPAIRS`` judged repairs is used (model at
    the site, the site, every site with the same symptoms), else every repair on the rule."""
    rules = {c.rule for c in contexts}
    rows = (
        Repair.objects.filter(rule__in=rules, outcome__in=JUDGED)
        .values("rule", "symptoms", "site_id", "module_model_id", "action")
        .annotate(judged=Count("id"), fixed=Count("id", filter=Q(outcome=RepairOutcome.FIXED)))
        .order_by()
    )
    # scope key -> action -> [fixed, judged]
    tallies: dict[tuple, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in rows:
        keys = (
            (0, r["rule"], r["symptoms"], r["site_id"], r["module_model_id"]),
            (1, r["rule"], r["symptoms"], r["site_id"]),
            (2, r["rule"], r["symptoms"]),
            (3, r["rule"]),
        )
        for k in keys:
            t = tallies[k][r["action"]]
            t[0] += r["fixed"]
            t[1] += r["judged"]
    out = {}
    for c in contexts:
        keys = (
            (0, c.rule, c.symptoms, c.site_id, c.module_model_id),
            (1, c.rule, c.symptoms, c.site_id),
            (2, c.rule, c.symptoms),
            (3, c.rule),
        )
        level = next(
            (
                i
                for i, k in enumerate(keys[:3])
                if sum(j for _, j in tallies.get(k, {}).values()) >= core.MIN_SCOPE_REPAIRS
            ),
            3,
        )
        counts = {a: (f, j) for a, (f, j) in tallies.get(keys[level], {}).items()}
        prior = core.prior_for(row=c.row, symptoms=c.symptoms)
        out[c.alert_id] = core.rank_actions(
            prior=prior, counts=counts, scope=_scope_words(level), first=core.rule_first(c.row)
        )
    return out


def alert_ranking(alert: Alert) -> tuple[RepairContext, core.Ranking]:
    ctx = repair_contexts([alert])[alert.pk]
    return ctx, rankings([ctx])[alert.pk]


# --- outcomes ------------------------------------------------------------------------------------


def _times(values) -> tuple[datetime, ...]:
    out = []
    for v in values or ():
        try:
            out.append(datetime.fromisoformat(v))
        except (TypeError, ValueError):
            continue
    return tuple(out)


def repair_verdicts(repairs: list[Repair], *, now: datetime) -> dict[int, core.Outcome]:
    """The verdict of each repair (``core.repair_outcome``; judged ones as stored), in two
    queries for any number of pending repairs: the other alerts of the same keys opened since,
    and the later repairs on the same alerts."""
    pending = [r for r in repairs if r.outcome == RepairOutcome.PENDING]
    out = {
        r.pk: core.Outcome(r.outcome, r.judged_at, r.outcome_reason)
        for r in repairs
        if r.outcome != RepairOutcome.PENDING
    }
    if not pending:
        return out
    alerts = {r.alert_id: r.alert for r in pending}
    since = min(r.done_at for r in pending)
    again: dict[str, list[tuple[datetime, int]]] = defaultdict(list)
    for key, opened_at, pk in Alert.objects.filter(
        key__in={a.key for a in alerts.values()}, opened_at__gt=since
    ).values_list("key", "opened_at", "pk"):
        again[key].append((opened_at, pk))
    later: dict[int, list[tuple[datetime, int]]] = defaultdict(list)
    for alert_id, done_at, pk in Repair.objects.filter(alert_id__in=alerts, done_at__gt=since).values_list(
        "alert_id", "done_at", "pk"
    ):
        later[alert_id].append((done_at, pk))
    hold = hold_s()
    for r in pending:
        a = alerts[r.alert_id]
        after = core.AlertAfter(
            state=a.state,
            resolved_at=a.resolved_at,
            returned_at=a.returned_at,
            updated_at=a.updated_at,
            reopened=_times((a.evidence or {}).get("reopened")),
            opened_again_at=min(
                (t for t, pk in again.get(a.key, []) if pk != a.pk and t > r.done_at), default=None
            ),
            next_repair_at=min(
                (t for t, pk in later.get(a.pk, []) if pk != r.pk and (t, pk) > (r.done_at, r.pk)),
                default=None,
            ),
        )
        out[r.pk] = core.repair_outcome(
            done_at=r.done_at, window_s=rule_clean_window_s(a.rule), hold_s=hold, now=now, after=after
        )
    return out


def alert_repairs(alert: Alert, *, now: datetime) -> list[dict]:
    """The alert's repairs, newest first, each with its verdict (for the page and the API)."""
    repairs = list(Repair.objects.filter(alert=alert).select_related("done_by", "alert", "cable"))
    verdicts = repair_verdicts(repairs, now=now)
    return [{"repair": r, "outcome": verdicts[r.pk]} for r in repairs]


# --- report --------------------------------------------------------------------------------------


def _rate(fixed: int, judged: int) -> float | None:
    return round(fixed / judged, 3) if judged else None


def first_time_fix_report(*, since: datetime | None = None, site_ids: set[int] | None = None) -> dict:
    """First-time-fix rate per month (of the repair) and per vendor (of the module, else the
    sealed cable), over judged repairs: two aggregate queries. ``pending`` counts the rest."""
    qs = Repair.objects.all()
    if since is not None:
        qs = qs.filter(done_at__gte=since)
    if site_ids is not None:
        qs = qs.filter(site_id__in=site_ids)
    fixed = Count("id", filter=Q(outcome=RepairOutcome.FIXED))
    judged = Count("id", filter=Q(outcome__in=JUDGED))
    pending = Count("id", filter=Q(outcome=RepairOutcome.PENDING))
    months = (
        qs.annotate(month=TruncMonth("done_at"))
        .values("month")
        .annotate(fixed=fixed, judged=judged, pending=pending)
        .order_by("month")
    )
    vendors = (
        qs.values("vendor__name")
        .annotate(fixed=fixed, judged=judged, pending=pending)
        .order_by("vendor__name")
    )
    return {
        "by_month": [
            {
                "month": m["month"].strftime("%Y-%m"),
                "fixed": m["fixed"],
                "judged": m["judged"],
                "pending": m["pending"],
                "first_time_fix_rate": _rate(m["fixed"], m["judged"]),
            }
            for m in months
        ],
        "by_vendor": [
            {
                "vendor": v["vendor__name"] or "unknown",
                "fixed": v["fixed"],
                "judged": v["judged"],
                "pending": v["pending"],
                "first_time_fix_rate": _rate(v["fixed"], v["judged"]),
            }
            for v in vendors
        ],
    }


def open_alerts_of_rules(rules: set[str]) -> list[Alert]:
    """Open alerts of these rules (open alerts are few), with what ``repair_contexts`` reads."""
    return list(Alert.objects.filter(state=AlertState.OPEN, rule__in=rules))


def cable_service_alerts(cable: Cable) -> list[Alert]:
    """The open alerts a re-seat or cleaning of ``cable`` is a repair of: warning and worse (the
    severities that hold a cable out of production, ``core.decision.BLOCKING_SEVERITIES``) on an
    active link through it; most severe first, then newest. The cable page's "Re-seated / cleaned"
    form names them and offers the first one's repair form, and records a re-seat or cleaning done
    on the cable against it too (``services.plant.fieldwork.cable_serviced``). One query."""
    alerts = list(
        Alert.objects.filter(
            state=AlertState.OPEN,
            severity__in=BLOCKING_SEVERITIES,
            link__active=True,
            link__segments__cable_id=cable.pk,
        )
        .distinct()
        .order_by("-opened_at", "-id")[:10]
    )
    return sorted(alerts, key=lambda a: SEVERITY_ORDER.get(a.severity, 0), reverse=True)
