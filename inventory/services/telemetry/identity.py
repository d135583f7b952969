"""Module identity and neighbours reported by telemetry, compared with the recorded plant.

``identities_record`` runs inside the ingest transaction: for each port whose samples carry an
EEPROM identity (vendor/part/serial), a neighbour or the module's DOM thresholds, it keeps the
latest in ``PortTelemetryState``, appends a ``PortObservation`` when something changed, and
raises an ``unrecorded_swap`` finding when the reported serial differs from the module recorded
in that port's cage (or, for a DAC/ACC/AOC plugged straight into the cage, from the cable end's
recorded serial ``Cable.serial_a`` / ``serial_b``). A port with nothing recorded is not a swap:
the reconciliation report (``inventory.selectors.telemetry.reconciliation``) lists it as a missing record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from inventory.core.choices import AlertRule, AlertState, CableKind, Severity
from inventory.core.telemetry.decode import IDENTITY_FIELDS, JUDGEMENT_FIELDS, THRESHOLD_FIELDS, Sample
from inventory.core.telemetry.rules import Finding
from inventory.models import Alert, CableEnd, Link, Port, PortObservation, PortTelemetryState, Transceiver
from inventory.services.alerts.lifecycle import alerts_apply


@dataclass(frozen=True)
class RecordedIdentity:
    """What the plant records in a port's cage: a module, or a sealed cable's end."""

    kind: str  # "module" | "cable_end" | "none"
    vendor: str = ""
    part: str = ""
    serial: str = ""
    transceiver_id: int | None = None
    cable_id: int | None = None
    cable_label: str = ""
    cable_side: str = ""


def recorded_identities(port_ids: list[int]) -> dict[int, RecordedIdentity]:
    """Recorded module or sealed-cable end per port, in three queries whatever the count."""
    ports = dict(Port.objects.filter(pk__in=port_ids).values_list("pk", "cage_id"))
    cages = {c for c in ports.values() if c}
    modules = {
        x.cage_id: x for x in Transceiver.objects.filter(cage_id__in=cages).select_related("model__vendor")
    }
    ends = {
        e.cage_id: e
        for e in CableEnd.objects.filter(
            cage_id__in=cages, active=True, cable__kind__in=CableKind.sealed()
        ).select_related("cable__vendor")
    }
    out: dict[int, RecordedIdentity] = {}
    for pid, cage in ports.items():
        x = modules.get(cage)
        e = ends.get(cage)
        if x is not None:
            out[pid] = RecordedIdentity(
                "module", x.model.vendor.name, x.model.part_number, x.serial, transceiver_id=x.pk
            )
        elif e is not None:
            c = e.cable
            out[pid] = RecordedIdentity(
                "cable_end",
                c.vendor.name if c.vendor else "",
                c.part_number,
                c.serial_a if e.side == "A" else c.serial_b,
                cable_id=c.pk,
                cable_label=c.label,
                cable_side=e.side,
            )
        else:
            out[pid] = RecordedIdentity("none")
    return out


def _norm(s: str | None) -> str:
    return (s or "").strip().upper()


def identities_record(*, rows: list[tuple[int, Sample]], now: datetime) -> list[Alert]:
    """Keep the latest reported identity per port; raise ``unrecorded_swap`` findings."""
    latest: dict[int, Sample] = {}
    for pid, s in rows:
        if any(getattr(s, f) is not None for f in (*IDENTITY_FIELDS, *THRESHOLD_FIELDS, *JUDGEMENT_FIELDS)):
            cur = latest.get(pid)
            if cur is None or s.ts >= cur.ts:
                latest[pid] = s
    if not latest:
        return []
    states = {st.port_id: st for st in PortTelemetryState.objects.filter(port_id__in=list(latest))}
    observations: list[PortObservation] = []
    upserts: list[PortTelemetryState] = []
    serial_changed: list[int] = []
    for pid, s in latest.items():
        st = states.get(pid)
        if st is not None and st.identity_seen_at is not None and st.identity_seen_at > s.ts:
            continue  # an older sample (a backfill) does not overwrite a newer identity
        new = PortTelemetryState(
            port_id=pid,
            identity_seen_at=s.ts,
            last_ts=max(s.ts, st.last_ts) if st is not None and st.last_ts else s.ts,
        )
        changed = st is None
        for f in IDENTITY_FIELDS:
            v = getattr(s, f)
            old = getattr(st, f) if st is not None else ""
            value = v.strip() if v is not None else old
            setattr(new, f, value)
            changed = changed or value != old
        for f in THRESHOLD_FIELDS:
            v = getattr(s, f)
            setattr(new, f, v if v is not None else (getattr(st, f) if st is not None else None))
        for f in ("module_thresholds", "module_flags"):
            v = getattr(s, f)
            setattr(new, f, v if v is not None else (getattr(st, f) if st is not None else {}))
        if s.dom_suspect is not None:
            new.dom_suspect, new.dom_suspect_at = s.dom_suspect, s.ts
        elif s.module_flags is not None or s.module_thresholds is not None:
            new.dom_suspect, new.dom_suspect_at = None, None  # a believable reading of the module
        else:
            new.dom_suspect = st.dom_suspect if st is not None else None
            new.dom_suspect_at = st.dom_suspect_at if st is not None else None
        upserts.append(new)
        if changed:
            observations.append(
                PortObservation(port_id=pid, ts=s.ts, **{f: getattr(new, f) for f in IDENTITY_FIELDS})
            )
        if s.module_serial and (st is None or _norm(st.module_serial) != _norm(s.module_serial)):
            serial_changed.append(pid)
    if upserts:
        PortTelemetryState.objects.bulk_create(
            upserts,
            update_conflicts=True,
            unique_fields=["port"],
            update_fields=[
                "identity_seen_at",
                "last_ts",
                *IDENTITY_FIELDS,
                *THRESHOLD_FIELDS,
                "module_thresholds",
                "module_flags",
                "dom_suspect",
                "dom_suspect_at",
            ],
        )
    if observations:
        PortObservation.objects.bulk_create(observations, ignore_conflicts=True)
    if not serial_changed:
        return []
    recorded = recorded_identities(serial_changed)
    findings = []
    for pid in serial_changed:
        rec = recorded.get(pid)
        s = latest[pid]
        if rec is None or rec.kind == "none" or not rec.serial:
            continue
        if _norm(rec.serial) == _norm(s.module_serial):
            continue
        findings.append(_swap_finding(port_id=pid, recorded=rec, sample=s))
    if not findings:
        return []
    return _raise(findings, now=now)


def _swap_finding(*, port_id: int, recorded: RecordedIdentity, sample: Sample):
    """The ``unrecorded_swap`` finding, keyed as the periodic rule evaluation keys it, so the
    ingest-time check and the rules update one alert, never two."""
    link = (
        Link.objects.filter(Q(a_port_id=port_id) | Q(b_port_id=port_id), active=True)
        .values_list("pk", "a_port_id")
        .first()
    )
    side = "port" if link is None else ("a" if link[1] == port_id else "b")
    what = (
        "module" if recorded.kind == "module" else f"cable {recorded.cable_label} end {recorded.cable_side}"
    )
    seen = " ".join(x for x in (sample.module_vendor, sample.module_part, sample.module_serial) if x)
    return Finding(
        key=f"unrecorded_swap:port:{port_id}",
        rule=AlertRule.UNRECORDED_SWAP,
        severity=Severity.NOTIFY,
        link_id=link[0] if link else None,
        port_id=port_id,
        headline=f"reports {seen}; the {what} recorded here is s/n {recorded.serial}",
        recommendation="Record the module swap (or find who changed the module) so its history stays true.",
        recommendation_code="record_swap",
        ends={
            side: {
                "port_id": port_id,
                "reported_serial": sample.module_serial or "",
                "reported_vendor": sample.module_vendor or "",
                "reported_part": sample.module_part or "",
                "recorded_serial": recorded.serial,
                "recorded_kind": recorded.kind,
                "transceiver_id": recorded.transceiver_id,
                "cable_id": recorded.cable_id,
                "ts": sample.ts.isoformat(),
            }
        },
    )


def _raise(findings: list, *, now: datetime) -> list[Alert]:
    """Through the alert lifecycle service (``inventory.services.alerts.lifecycle``): opens once, updates
    while it holds, honours maintenance windows, never resolves here."""
    alerts_apply(
        findings=findings,
        holding={f.key for f in findings},
        reporting_port_ids=set(),
        now=now,
        resolve=False,
    )
    return list(Alert.objects.filter(state=AlertState.OPEN, key__in=[f.key for f in findings]))
