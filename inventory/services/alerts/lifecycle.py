"""Alert lifecycle: open, update and resolve alerts (``alert_raise`` opens one, ``alerts_apply`` a batch).

* An alert is keyed by its condition (``fec_degradation:link:42``). At most one open alert per
  key is a database constraint, so re-runs and concurrent runs update, never duplicate.
* Open: a finding whose key has no open alert. Update: a finding (or a condition that still
  shows in the clear window, ``Evaluation.holding``) for an open alert. Resolve: an open alert
  whose ports reported in the window and whose condition no longer shows at all. A port that
  stopped reporting keeps its alert open (absence of data is not health).
* Findings inside a maintenance window are recorded with ``silenced=True``: no mail, no status
  change.
* A newly opened, unsilenced alert moves the cable it names to "degraded" when its rule and
  severity say the cable is degraded (``core.decision.alert_degrades``: the physical rules, and a
  collective's spike that names a most likely cable), through ``cable_set_status``, so the change
  has history. Every rule takes this one path: the periodic rules, the spike and the demo seed.
* Mail: a notification row per opened alert; ``notify.alert_notifications_send`` claims it
  before sending. Silencing lives in ``silencing``, the periodic run in ``evaluate``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils.text import Truncator

from inventory.conf import app_settings
from inventory.core.choices import SEVERITY_ORDER, AlertState, CableStatus, Severity
from inventory.core.decision import alert_degrades
from inventory.core.mail import why_line
from inventory.core.telemetry import rules as engine
from inventory.models import Alert, AlertNotification
from inventory.selectors.alerts.repairs import rule_clean_window_s
from inventory.services.alerts.naming import finding_describe, findings_context
from inventory.services.alerts.notify import alert_recipients, notice_message_id
from inventory.services.alerts.repairs import recommendations_refresh
from inventory.services.alerts.silencing import Silence, maintenance_active
from inventory.services.ops.enqueue import enqueue_now
from inventory.services.plant import cables as cable_services

log = logging.getLogger(__name__)

DEGRADABLE = {CableStatus.INSTALLED, CableStatus.TESTED, CableStatus.IN_PRODUCTION}


@dataclass
class EvaluateReport:
    ports: int = 0
    findings: int = 0
    opened: list[int] = field(default_factory=list)
    updated: int = 0
    reopened: int = 0
    resolved: int = 0
    silenced: int = 0
    notices: int = 0
    baselines: int = 0
    seconds_rules: float = 0.0


# --- raise / apply --------------------------------------------------------------------------------


def without_rule_label(alert: Alert) -> str:
    """An alert's summary without the rule's name it starts with (``naming``: "FEC degradation:
    leaf-01:Ethernet1/1 ...")."""
    return alert.summary.removeprefix(f"{alert.get_rule_display()}: ")


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
    reporting_keys: set[str] | None = None,
) -> EvaluateReport:
    """Open, update and resolve alerts to match this evaluation. Safe to run twice."""
    report = report or EvaluateReport()
    silence = silence if silence is not None else maintenance_active(now=now)
    ctx = findings_context(findings)
    by_key = {f.key: f for f in findings}
    open_alerts = {a.key: a for a in Alert.objects.filter(state=AlertState.OPEN, key__in=list(by_key))}
    open_alerts |= _reopen_recent(keys=set(by_key) - set(open_alerts), now=now, report=report)
    described = {f.key: finding_describe(f, ctx) for f in findings}

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
        if a.watching_since is not None and _clean_window_passed(a, now):
            # The condition shows again past the rule's window after the replacement: the new
            # part did not fix it. It reopens from watching, naming the part that replaced the old.
            a.watching_since, a.returned_at = None, now
        if a.returned_at is not None and a.replacement:
            a.summary = f"Back after the {a.replacement}: {d['summary']}"[:300]
        previous = a.evidence or {}
        history = list(previous.get("history", []))[-23:]
        history.append({"at": now.isoformat(), "ends": f.ends})
        a.evidence = {**d["evidence"], "history": history}
        if "reopened" in previous:
            a.evidence["reopened"] = previous["reopened"]
        changed.append(a)
    if changed:
        Alert.objects.bulk_update(
            changed,
            [
                "severity",
                "updated_at",
                "summary",
                "recommendation",
                "evidence",
                "watching_since",
                "returned_at",
            ],
        )
    report.updated += len(changed)

    # The recommendation of what opened or changed: the rule's words, or the repair that
    # recorded outcomes rank first (``repairs.recommendations_refresh``).
    recommendations_refresh(alerts=[*opened, *changed])

    # Conditions that still show (below the opening bar) keep their alert open.
    still = Alert.objects.filter(state=AlertState.OPEN, key__in=list(holding - set(by_key)))
    report.updated += still.update(updated_at=now)

    if resolve:
        report.resolved += _resolve_cleared(
            keep=holding | set(by_key),
            reporting=reporting_port_ids,
            now=now,
            rules=rules_evaluated,
            reporting_keys=reporting_keys or set(),
        )

    # Side effects of newly opened, unsilenced alerts: cable status and mail, in the cables'
    # order, so that alert shards running side by side, which may degrade the same trunk, take
    # its row lock in one order and never deadlock.
    for a in sorted(opened, key=lambda a: _pk(described[a.key]["suspect"])):
        if a.silenced:
            continue
        d = described[a.key]
        cable = d["suspect"]
        if cable is not None and cable.status in DEGRADABLE and alert_degrades(a.rule, a.severity):
            cable_services.cable_set_status(
                cable=cable,
                status=CableStatus.DEGRADED,
                # the history's words name the rule from its code ("alert #12 (FEC degradation)"):
                # the summary follows without its own copy of the rule's name, in the 100 characters
                reason=Truncator(f"alert {a.rule} #{a.pk}: {without_rule_label(a)}").chars(100),
            )
        if a.severity == Severity.INFO:
            continue
        told = alert_recipients(devices=d["devices"])
        created = AlertNotification.objects.bulk_create(
            [
                AlertNotification(
                    alert=a,
                    kind="opened",
                    recipients=[t.address for t in told],
                    why=why_line(told),
                    message_id=notice_message_id(a, "opened"),
                    created_at=now,
                )
            ],
            ignore_conflicts=True,
        )
        report.notices += len(created)
    if report.notices:
        transaction.on_commit(lambda: _enqueue("inventory.alert_notifications_send"))
    return report


def _pk(obj) -> int:
    return 0 if obj is None else obj.pk


def _reopen_recent(*, keys: set[str], now: datetime, report: EvaluateReport) -> dict[str, Alert]:
    """Hysteresis at the alert level: a condition back within ``CABLETRACK_ALERT_REOPEN_S`` of
    its alert's resolution reopens that alert (same row, its history kept) instead of opening a
    new one, so it neither mails again nor moves the cable a second time."""
    if not keys:
        return {}
    since = now - timedelta(seconds=float(app_settings.alert_reopen_s))
    latest: dict[str, Alert] = {}
    for a in Alert.objects.filter(
        state=AlertState.RESOLVED, key__in=list(keys), resolved_at__gte=since
    ).order_by("key", "-resolved_at"):
        latest.setdefault(a.key, a)
    reopened = {}
    for key, a in latest.items():
        # Conditional: a concurrent run may have opened the key already (one open per key).
        if Alert.objects.filter(key=key, state=AlertState.OPEN).exists():
            continue
        n = Alert.objects.filter(pk=a.pk, state=AlertState.RESOLVED).update(
            state=AlertState.OPEN, resolved_at=None, updated_at=now
        )
        if n:
            a.state, a.resolved_at = AlertState.OPEN, None
            a.evidence = {**a.evidence, "reopened": [*a.evidence.get("reopened", [])[-9:], now.isoformat()]}
            reopened[key] = a
    report.reopened += len(reopened)
    return reopened


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


def _resolve_cleared(
    *, keep: set[str], reporting: set[int], now: datetime, rules: set[str] | None, reporting_keys: set[str]
) -> int:
    """Resolve the open alerts (of ``rules``) whose condition is gone and whose subject reported
    in the window: a port of the alert's link or port, or (alerts on no port, such as a
    communicator's) the alert's key among ``reporting_keys``."""
    qs = Alert.objects.filter(state=AlertState.OPEN).exclude(key__in=list(keep)).select_related("link")
    if rules is not None:
        qs = qs.filter(rule__in=rules)
    done = []
    for a in qs:
        if a.watching_since is not None and not _clean_window_passed(a, now):
            continue  # replaced, watching: the window still holds samples from before the repair
        if _alert_port_ids(a) & reporting or a.key in reporting_keys:
            done.append(a.pk)
    if not done:
        return 0
    return Alert.objects.filter(pk__in=done, state=AlertState.OPEN).update(
        state=AlertState.RESOLVED, resolved_at=now, updated_at=now, watching_since=None
    )


def _clean_window_passed(alert: Alert, now: datetime) -> bool:
    """Has the rule's clean window passed since the alert's part was replaced (or repaired)?"""
    return (now - alert.watching_since).total_seconds() >= rule_clean_window_s(alert.rule)
