"""Alert lifecycle: evaluate the rules, open/update/resolve alerts, silence, notify.

* An alert is keyed by its condition (``fec_degradation:link:42``). At most one open alert per
  key is a database constraint, so re-runs and concurrent runs update, never duplicate.
* Open: a finding whose key has no open alert. Update: a finding (or a condition that still
  shows in the clear window, ``Evaluation.holding``) for an open alert. Resolve: an open alert
  whose ports reported in the window and whose condition no longer shows at all. A port that
  stopped reporting keeps its alert open (absence of data is not health).
* Findings inside a maintenance window are recorded with ``silenced=True``: no mail, no status
  change.
* A newly opened, unsilenced physical-layer alert moves the suspect cable to "degraded"
  (through ``cable_set_status``, so the change has history).
* Mail: a notification row is claimed before sending (see ``alert_notifications_send``).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core.choices import SEVERITY_ORDER, AlertRule, AlertState, CableKind, CableStatus, Severity
from inventory.core.telemetry import rules as engine
from inventory.models import (
    Alert,
    AlertNotification,
    Cable,
    CableEnd,
    CableTest,
    Device,
    Link,
    LinkSegment,
    MaintenanceWindow,
    Port,
    PortBaseline,
    Rack,
)
from inventory.selectors.telemetry.rule_inputs import rule_inputs
from inventory.services.ops.enqueue import enqueue_now
from inventory.services.plant import cables as cable_services

log = logging.getLogger(__name__)

DEGRADABLE = {CableStatus.INSTALLED, CableStatus.TESTED, CableStatus.IN_PRODUCTION}
PORT_RELATED = (
    "device__rack__row__room__site",
    "cage__transceiver__model__vendor",
)


def rule_config() -> engine.RuleConfig:
    return engine.RuleConfig.from_dict(app_settings.alert_rules)


@dataclass
class EvaluateReport:
    ports: int = 0
    findings: int = 0
    opened: list[int] = field(default_factory=list)
    updated: int = 0
    resolved: int = 0
    silenced: int = 0
    notices: int = 0
    baselines: int = 0
    seconds_rules: float = 0.0


# --- maintenance ---------------------------------------------------------------------------------


@dataclass
class Silence:
    links: set[int]
    devices: set[int]
    racks: set[int]
    everything: bool = False

    def covers(self, *, link_id: int | None, devices: list[Device]) -> bool:
        if self.everything:
            return True
        if link_id is not None and link_id in self.links:
            return True
        return any(d.pk in self.devices or (d.rack_id and d.rack_id in self.racks) for d in devices)


def maintenance_active(*, now: datetime) -> Silence:
    active = MaintenanceWindow.objects.filter(starts_at__lte=now, ends_at__gt=now)
    through = MaintenanceWindow
    return Silence(
        links=set(
            through.links.through.objects.filter(maintenancewindow__in=active).values_list(
                "link_id", flat=True
            )
        ),
        devices=set(
            through.devices.through.objects.filter(maintenancewindow__in=active).values_list(
                "device_id", flat=True
            )
        ),
        racks=set(
            through.racks.through.objects.filter(maintenancewindow__in=active).values_list(
                "rack_id", flat=True
            )
        ),
    )


@transaction.atomic
def maintenance_start(
    *,
    starts_at: datetime,
    ends_at: datetime,
    reason: str,
    links: list[Link] = (),
    devices: list[Device] = (),
    racks: list[Rack] = (),
    actor=None,
    now: datetime | None = None,
) -> MaintenanceWindow:
    """Silence links, devices or racks for a window. Findings are still recorded, silenced."""
    errors = {}
    if not reason.strip():
        errors["reason"] = "Say why (a technician reading the alert list needs to know)."
    if ends_at <= starts_at:
        errors["ends_at"] = "The window must end after it starts."
    elif ends_at - starts_at > timedelta(days=14):
        errors["ends_at"] = "A maintenance window lasts at most 14 days."
    if not (links or devices or racks):
        errors["links"] = "Choose at least one link, device or rack to silence."
    if errors:
        raise ValidationError(errors)
    mw = MaintenanceWindow.objects.create(
        starts_at=starts_at,
        ends_at=ends_at,
        reason=reason.strip()[:200],
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
        created_at=now or timezone.now(),
    )
    if links:
        mw.links.set(links)
    if devices:
        mw.devices.set(devices)
    if racks:
        mw.racks.set(racks)
    return mw


def maintenance_end(*, window: MaintenanceWindow, now: datetime) -> MaintenanceWindow:
    """End a window early (it is kept, with its real end, for the record)."""
    if window.ends_at > now:
        window.ends_at = now if now > window.starts_at else window.starts_at + timedelta(microseconds=1)
        window.save(update_fields=["ends_at"])
    return window


# --- naming: the port pair, segments, modules, last tests -----------------------------------------


def _port_label(p: Port | None) -> str:
    return f"{p.device.name}:{p.name}" if p else "?"


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
class _Context:
    links: dict[int, Link]
    ports: dict[int, Port]
    segments: dict[int, list[Cable]]
    last_tests: dict[int, dict]
    sealed: dict[int, CableEnd] = field(default_factory=dict)  # cage id -> DAC/ACC/AOC end in it


def _context(findings: list[engine.Finding]) -> _Context:
    link_ids = {f.link_id for f in findings if f.link_id is not None}
    links = {
        lk.pk: lk
        for lk in Link.objects.filter(pk__in=link_ids).select_related(
            *(f"a_port__{r}" for r in PORT_RELATED), *(f"b_port__{r}" for r in PORT_RELATED)
        )
    }
    port_ids = {f.port_id for f in findings} - {
        p for lk in links.values() for p in (lk.a_port_id, lk.b_port_id)
    }
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
    return _Context(links, ports, segments, last_tests, sealed)


def _suspect(cables: list[Cable], last_tests: dict[int, dict]) -> Cable | None:
    """The segment to look at first: the one with the least test margin (else the first)."""
    if not cables:
        return None

    def margin(c):
        m = (last_tests.get(c.pk) or {}).get("margin_db")
        return m if m is not None else float("inf")

    return min(cables, key=margin) if any(margin(c) != float("inf") for c in cables) else cables[0]


def _describe(f: engine.Finding, ctx: _Context) -> dict:
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
    }
    return {
        "summary": f"{rule_label}: {pair}: {f.headline}"[:300],
        "recommendation": recommendation[:500],
        "evidence": evidence,
        "cables": cables,
        "suspect": _suspect(cables, ctx.last_tests) if f.rule in engine.PHYSICAL_RULES else None,
        "devices": devices,
        "port": a if f.port_id is None else ctx.ports.get(f.port_id, a),
    }


# --- recipients -----------------------------------------------------------------------------------


def alert_recipients(*, devices: list[Device]) -> list[str]:
    """The people responsible for the racks: rack team, else row team, else site team."""
    emails: list[str] = []
    teams = []
    for d in devices:
        rack = d.rack
        if rack is None:
            continue
        team = rack.team or rack.row.team or rack.row.room.site.team
        if team and team not in teams:
            teams.append(team)
    for team in teams:
        if team.email:
            emails.append(team.email)
        emails.extend(u.email for u in team.members.all() if u.email and u.is_active)
    return list(dict.fromkeys(e.lower() for e in emails))


def _message_id(alert: Alert, kind: str) -> str:
    domain = app_settings.base_url.split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0] or "cabletrack"
    return f"<alert-{alert.pk}-{kind}@{domain}>"


# --- raise / apply --------------------------------------------------------------------------------


def alert_raise(*, finding: engine.Finding, now: datetime, silenced: bool = False) -> tuple[Alert, bool]:
    """Open the alert for ``finding`` or update the open one. Returns (alert, opened)."""
    report = EvaluateReport()
    alerts_apply(
        findings=[finding],
        holding={finding.key},
        reporting_port_ids=set(),
        now=now,
        silence=Silence(set(), set(), set(), everything=silenced),
        report=report,
        resolve=False,
    )
    alert = Alert.objects.get(key=finding.key, state=AlertState.OPEN)
    return alert, alert.pk in report.opened


@transaction.atomic
def alerts_apply(
    *,
    findings: list[engine.Finding],
    holding: set[str],
    reporting_port_ids: set[int],
    now: datetime,
    silence: Silence | None = None,
    report: EvaluateReport | None = None,
    resolve: bool = True,
    rules_evaluated: set[str] | None = None,
) -> EvaluateReport:
    """Open, update and resolve alerts to match this evaluation. Safe to run twice."""
    report = report or EvaluateReport()
    silence = silence if silence is not None else maintenance_active(now=now)
    ctx = _context(findings)
    by_key = {f.key: f for f in findings}
    open_alerts = {a.key: a for a in Alert.objects.filter(state=AlertState.OPEN, key__in=list(by_key))}
    described = {f.key: _describe(f, ctx) for f in findings}

    new_rows = []
    for f in findings:
        if f.key in open_alerts:
            continue
        d = described[f.key]
        silenced = silence.covers(link_id=f.link_id, devices=d["devices"])
        new_rows.append(
            Alert(
                key=f.key,
                rule=f.rule,
                severity=f.severity,
                state=AlertState.OPEN,
                link_id=f.link_id,
                port=d["port"],
                cable=d["suspect"],
                opened_at=now,
                updated_at=now,
                silenced=silenced,
                summary=d["summary"],
                recommendation=d["recommendation"],
                evidence=d["evidence"],
            )
        )
    if new_rows:
        # A concurrent run may have opened the same key: the partial unique index makes that a
        # no-op here, and the re-read below picks up the winner's row.
        Alert.objects.bulk_create(new_rows, ignore_conflicts=True)
    fresh = {a.key: a for a in Alert.objects.filter(state=AlertState.OPEN, key__in=list(by_key))}
    opened = [a for k, a in fresh.items() if k not in open_alerts and a.opened_at == now]
    report.opened.extend(a.pk for a in opened)
    report.silenced += sum(1 for a in opened if a.silenced)

    # Every segment of the path, recorded on the alert (a snapshot: paths change).
    through = Alert.cables.through
    links_rows = [through(alert_id=a.pk, cable_id=c.pk) for a in opened for c in described[a.key]["cables"]]
    through.objects.bulk_create(links_rows, ignore_conflicts=True)

    # Update the alerts that were already open.
    changed = []
    for key, a in open_alerts.items():
        f = by_key[key]
        d = described[key]
        a.severity = max(a.severity, f.severity, key=lambda s: SEVERITY_ORDER.get(s, 0))
        a.updated_at = now
        a.summary = d["summary"]
        a.recommendation = d["recommendation"]
        history = list(a.evidence.get("history", []))[-23:]
        history.append({"at": now.isoformat(), "ends": f.ends})
        a.evidence = {**d["evidence"], "history": history}
        changed.append(a)
    if changed:
        Alert.objects.bulk_update(
            changed, ["severity", "updated_at", "summary", "recommendation", "evidence"]
        )
    report.updated += len(changed)

    # Conditions that still show (below the opening bar) keep their alert open.
    still = Alert.objects.filter(state=AlertState.OPEN, key__in=list(holding - set(by_key)))
    report.updated += still.update(updated_at=now)

    if resolve:
        report.resolved += _resolve_cleared(
            keep=holding | set(by_key), reporting=reporting_port_ids, now=now, rules=rules_evaluated
        )

    # Side effects of newly opened, unsilenced alerts: cable status and mail.
    for a in opened:
        if a.silenced:
            continue
        d = described[a.key]
        cable = d["suspect"]
        if a.rule in engine.PHYSICAL_RULES and cable is not None and cable.status in DEGRADABLE:
            cable_services.cable_set_status(
                cable=cable, status=CableStatus.DEGRADED, reason=f"alert {a.rule} #{a.pk}: {a.summary}"[:100]
            )
        if a.severity == Severity.INFO:
            continue
        recipients = alert_recipients(devices=d["devices"])
        created = AlertNotification.objects.bulk_create(
            [
                AlertNotification(
                    alert=a,
                    kind="opened",
                    recipients=recipients,
                    message_id=_message_id(a, "opened"),
                    created_at=now,
                )
            ],
            ignore_conflicts=True,
        )
        report.notices += len(created)
    if report.notices:
        transaction.on_commit(lambda: _enqueue("inventory.alert_notifications_send"))
    return report


def _enqueue(task_name: str) -> None:
    try:
        enqueue_now(task_name)
    except Exception:  # broker down: the periodic sweep sends it later
        log.warning("could not enqueue %s; the periodic sweep will send it", task_name, exc_info=True)


def _alert_port_ids(alert: Alert) -> set[int]:
    ids = set()
    if alert.link_id:
        ids |= {alert.link.a_port_id, alert.link.b_port_id}
    if alert.port_id:
        ids.add(alert.port_id)
    return ids


def _resolve_cleared(*, keep: set[str], reporting: set[int], now: datetime, rules: set[str] | None) -> int:
    qs = Alert.objects.filter(state=AlertState.OPEN).exclude(key__in=list(keep)).select_related("link")
    if rules is not None:
        qs = qs.filter(rule__in=rules)
    done = []
    for a in qs:
        if _alert_port_ids(a) & reporting:
            done.append(a.pk)
    if not done:
        return 0
    return Alert.objects.filter(pk__in=done, state=AlertState.OPEN).update(
        state=AlertState.RESOLVED, resolved_at=now, updated_at=now
    )


# --- the periodic evaluation ----------------------------------------------------------------------

EVALUATED_RULES = {
    "link_flap",
    "link_degraded",
    "fec_degradation",
    "fec_tail",
    "fec_uncorrectable",
    "rx_power_drift",
    "pfc_storm",
    "miswire",
    "unrecorded_swap",
}


def alerts_evaluate(*, now: datetime, config: engine.RuleConfig | None = None) -> EvaluateReport:
    """Evaluate every rule over the telemetry window ending at ``now`` and apply the result."""
    config = config or rule_config()
    lookback = float(app_settings.alert_lookback_s)
    bucket = float(app_settings.alert_bucket_s)
    inputs = rule_inputs(now=now, config=config, lookback_s=lookback, bucket_s=bucket)
    t0 = time.perf_counter()
    ev = engine.evaluate(inputs.window, inputs.facts, inputs.links, inputs.profiles)
    report = EvaluateReport(ports=inputs.window.n, findings=len(ev.findings))
    report.seconds_rules = time.perf_counter() - t0
    alerts_apply(
        findings=ev.findings,
        holding=ev.holding,
        reporting_port_ids={int(p) for p in ev.reporting_port_ids},
        now=now,
        report=report,
        rules_evaluated=EVALUATED_RULES,
    )
    report.baselines = baselines_learn(port_ids=inputs.window.port_id, ev=ev, now=now)
    return report


def baselines_learn(*, port_ids: np.ndarray, ev: engine.Evaluation, now: datetime) -> int:
    """Learn each healthy port's normal: first value as is, then a slow average (hourly).

    BER and codeword rates average in log space (a decade is a decade), power in dB. Ports with
    any open alert are skipped, so a degradation is never learnt as normal.
    """
    refresh = timedelta(seconds=float(app_settings.baseline_refresh_s))
    weight = float(app_settings.baseline_weight)
    healthy = (
        np.isfinite(ev.baseline_ber) | np.isfinite(ev.baseline_cw_rate) | np.isfinite(ev.rx_now).any(axis=1)
    )
    rows = np.nonzero(healthy)[0]
    if rows.size == 0:
        return 0
    ids = [int(port_ids[i]) for i in rows]
    alerted = set(
        Alert.objects.filter(state=AlertState.OPEN)
        .filter(Q(port_id__in=ids) | Q(link__a_port_id__in=ids) | Q(link__b_port_id__in=ids))
        .values_list("port_id", "link__a_port_id", "link__b_port_id")
    )
    skip = {p for t in alerted for p in t if p is not None}
    existing = {b.port_id: b for b in PortBaseline.objects.filter(port_id__in=ids)}
    out = []

    def blend_log(old, new):
        if new is None or not np.isfinite(new) or new <= 0:
            return old
        if old is None or old <= 0:
            return float(new)
        return float(10 ** ((1 - weight) * np.log10(old) + weight * np.log10(new)))

    for i, pid in zip(rows, ids, strict=True):
        if pid in skip:
            continue
        ber = ev.baseline_ber[i]
        cw = ev.baseline_cw_rate[i]
        rx = [None if not np.isfinite(v) else round(float(v), 2) for v in ev.rx_now[i]]
        b = existing.get(pid)
        if b is None:
            out.append(
                PortBaseline(
                    port_id=pid,
                    pre_fec_ber=float(ber) if np.isfinite(ber) and ber > 0 else None,
                    cw_rate=float(cw) if np.isfinite(cw) and cw > 0 else None,
                    rx_power_dbm=rx if any(v is not None for v in rx) else None,
                    first_at=now,
                    updated_at=now,
                )
            )
            continue
        if now - b.updated_at < refresh:
            continue
        b.pre_fec_ber = blend_log(b.pre_fec_ber, ber)
        b.cw_rate = blend_log(b.cw_rate, cw)
        old_rx = list(b.rx_power_dbm or [None] * len(rx))
        old_rx += [None] * (len(rx) - len(old_rx))
        b.rx_power_dbm = [
            n if o is None else (o if n is None else round((1 - weight) * o + weight * n, 2))
            for o, n in zip(old_rx, rx, strict=False)
        ]
        b.updated_at = now
        out.append(b)
    if out:
        PortBaseline.objects.bulk_create(
            out,
            update_conflicts=True,
            unique_fields=["port"],
            update_fields=["pre_fec_ber", "cw_rate", "rx_power_dbm", "updated_at"],
            batch_size=2000,
        )
    return len(out)


# --- acknowledge / silence from the list -----------------------------------------------------------


def alert_acknowledge(*, alert: Alert, actor, now: datetime) -> Alert:
    if alert.acknowledged_at is None:
        alert.acknowledged_at = now
        alert.acknowledged_by = actor if getattr(actor, "is_authenticated", False) else None
        alert.save(update_fields=["acknowledged_at", "acknowledged_by"])
    return alert


@transaction.atomic
def alert_silence(*, alert: Alert, hours: float, reason: str, actor, now: datetime) -> MaintenanceWindow:
    """Silence what the alert is about (its link, else its port's device) for ``hours``."""
    if not 0 < hours <= 14 * 24:
        raise ValidationError({"hours": "Silence for more than 0 and at most 336 hours."})
    links = [alert.link] if alert.link_id else []
    devices = [alert.port.device] if not links and alert.port_id else []
    mw = maintenance_start(
        starts_at=now,
        ends_at=now + timedelta(hours=hours),
        reason=reason or f"silenced from alert #{alert.pk}",
        links=links,
        devices=devices,
        actor=actor,
        now=now,
    )
    Alert.objects.filter(pk=alert.pk).update(silenced=True)
    alert_acknowledge(alert=alert, actor=actor, now=now)
    return mw


# --- mail -------------------------------------------------------------------------------------------

CLAIM_LEASE = timedelta(minutes=10)


def alert_notifications_send(*, now: datetime, limit: int = 200) -> int:
    """Send unsent notices. Each is claimed first (a conditional UPDATE), so concurrent senders
    never both send it; a claim older than the lease is taken over (the sender died).

    Remaining window, documented: if the process dies after the SMTP server accepted the
    message and before ``sent_at`` is written, the notice goes again after the lease, with the
    same Message-ID.
    """
    sent = 0
    pending = (
        AlertNotification.objects.filter(sent_at__isnull=True, attempts__lt=5)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_LEASE))
        .select_related("alert")
        .order_by("created_at", "id")[:limit]
    )
    for n in pending:
        token = uuid.uuid4().hex
        won = AlertNotification.objects.filter(pk=n.pk, sent_at__isnull=True, claimed_at=n.claimed_at).update(
            claimed_at=now, claim_token=token, attempts=F("attempts") + 1
        )
        if not won:
            continue
        if not n.recipients:
            AlertNotification.objects.filter(pk=n.pk, claim_token=token).update(
                sent_at=now, error="no recipients: no team responsible for these racks"
            )
            continue
        a = n.alert
        url = f"{app_settings.base_url}/alerts/{a.pk}/"
        body = "\n".join(
            [
                a.summary,
                "",
                f"Severity: {a.get_severity_display()}",
                f"Recommendation: {a.recommendation}",
                "",
                "Path: " + ", ".join(s["label"] for s in a.evidence.get("segments", [])) or "-",
                f"Details: {url}",
            ]
        )
        msg = EmailMessage(
            subject=f"[cabletrack] {a.get_severity_display()}: {a.summary}"[:200],
            body=body,
            to=n.recipients,
            headers={"Message-ID": n.message_id},
        )
        try:
            msg.send(fail_silently=False)
        except Exception as exc:  # SMTP down: release the claim, try again on the next sweep
            AlertNotification.objects.filter(pk=n.pk, claim_token=token).update(
                claimed_at=None, error=str(exc)[:300]
            )
            log.warning("alert notice %s not sent: %s", n.pk, exc)
            continue
        AlertNotification.objects.filter(pk=n.pk, claim_token=token).update(sent_at=timezone.now(), error="")
        sent += 1
    return sent
