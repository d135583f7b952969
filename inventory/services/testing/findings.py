"""After every test record: the first pass becomes the baseline, a retest is compared with it,
and a loss that rose is a ``loss_increase`` finding: an alert raised through the alert lifecycle
(``alerts_apply``, the path ``alert_raise`` and the rule engine take), so maintenance windows and
mail notices apply to it as to every other alert."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from inventory.core.choices import AlertRule, AlertState, Severity, TestKind
from inventory.core.telemetry import rules as engine
from inventory.models import Alert, Cable, CableTest, Link
from inventory.selectors.plant.trace import port_trace
from inventory.selectors.testing.facts import loss_increase_db
from inventory.selectors.testing.latest import PASSING
from inventory.services.alerts.lifecycle import alerts_apply
from inventory.services.retests.due import retest_due_refresh_on_commit
from inventory.services.testing.latest_table import cable_test_latest_refresh


def after_test(test: CableTest, *, now: datetime) -> None:
    """Keep the cable's latest tests; baseline on the first pass; compare a retest with the
    baseline; move the retest due date.

    OTDR sessions do the same set-based, a batch at a time (``otdr_history``)."""
    cable_test_latest_refresh(cable_ids=[test.cable_id])
    retest_due_refresh_on_commit(
        cable_id=test.cable_id, now=now, reason=f"{test.kind} test recorded: {test.verdict}"
    )
    base = _baseline(test.cable, test.kind, exclude=test.pk)
    if base is None:
        if test.verdict in PASSING:
            test.is_baseline = True
            test.save(update_fields=["is_baseline"])
        return
    if test.kind == TestKind.OLTS:
        _compare_olts(test, base, now=now)


def _baseline(cable: Cable, kind: str, exclude: int | None = None) -> CableTest | None:
    qs = CableTest.objects.filter(cable=cable, kind=kind, is_baseline=True)
    if exclude:
        qs = qs.exclude(pk=exclude)
    return qs.order_by("tested_at").first()


def _compare_olts(test: CableTest, base: CableTest, *, now: datetime) -> None:
    threshold = loss_increase_db()
    old = {(r.fibre, r.wavelength_nm, r.direction): r.loss_db for r in base.fibres.all()}
    rises = []
    for r in test.fibres.all():
        before = old.get((r.fibre, r.wavelength_nm, r.direction))
        if before is not None and r.loss_db - before >= threshold - 1e-9:
            rises.append((r.fibre, r.wavelength_nm, round(before, 2), round(r.loss_db, 2)))
    if not rises:
        return
    msgs = [f"fibre {f} @{wl} nm {a} -> {b} dB" for f, wl, a, b in rises]
    test.warnings = [
        *test.warnings,
        f"Loss rose by {threshold} dB or more since the baseline: " + ", ".join(msgs),
    ]
    test.details = {**test.details, "loss_increase": {"baseline_test": base.pk, "fibres": rises}}
    test.save(update_fields=["warnings", "details"])
    raise_loss_increase(
        test=test,
        # the day as every page says one ("17 Sep 2025"), not ISO: the alert's summary is read on
        # the rack page, home and the alert list as it was written
        findings=[
            f"loss up since the baseline of {timezone.localtime(base.tested_at):%-d %b %Y}: "
            + ", ".join(msgs)
        ],
        evidence={"baseline_test": base.pk, "threshold_db": threshold, "fibres": rises},
        now=now,
    )


def path_segments(link: Link | None, cable: Cable) -> list[tuple[str, float | None, str]]:
    """(label, length m, far end) along the link's path, or the cable alone."""
    if link is None:
        return [(cable.label, float(cable.length_m) if cable.length_m else None, "its far end")]
    trace = port_trace(link.a_port)
    lengths = dict(Cable.objects.filter(pk__in=trace.cable_ids).values_list("pk", "length_m"))
    out = []
    for s in trace.segments:
        ln = lengths.get(s.cable_id)
        out.append((s.label, float(ln) if ln else None, str(s.far)))
    return out


def raise_loss_increase(*, test: CableTest, findings: list[str], evidence: dict, now: datetime) -> Alert:
    """Open (or update) the cable's ``loss_increase`` alert through the alert lifecycle service,
    the one path every alert takes: a maintenance window silences it, an unsilenced one is mailed."""
    link = test.link or Link.objects.filter(active=True, segments__cable=test.cable).first()
    finding = engine.Finding(
        key=f"{AlertRule.LOSS_INCREASE}:cable:{test.cable_id}",  # one open alert per key (a constraint)
        rule=AlertRule.LOSS_INCREASE,
        severity=Severity.NOTIFY,
        link_id=link.pk if link else None,
        port_id=link.a_port_id if link else None,
        headline=f"{test.cable.label}: " + "; ".join(findings)[:280],
        recommendation=(
            "Inspect and clean the connectors near the event, check the route for a bend or crush; "
            "replace the segment if the loss stays."
        ),
        recommendation_code="clean",
        evidence={"test_id": test.pk, "kind": test.kind, **evidence},
    )
    alerts_apply(findings=[finding], holding={finding.key}, reporting_port_ids=set(), now=now, resolve=False)
    alert = Alert.objects.get(key=finding.key, state=AlertState.OPEN)
    if alert.cable_id is None:  # the tested cable is the suspect (the retest scheduler reads it)
        alert.cable = test.cable
        alert.save(update_fields=["cable"])
    return alert
