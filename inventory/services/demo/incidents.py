"""What is wrong in the demo hall today: a few open alerts and reported faults, so every page
(home, alerts, the rack, the cable) has something to show on a fresh demo.

Deterministic by seed. Alerts go through ``alert_raise`` (the one path every alert takes);
faults are field notes with the cable's status moved to faulty, written through the
sanctioned bulk writer so each change has its history row.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from simple_history.utils import bulk_update_with_history

from inventory.core.choices import AlertRule, CableKind, CableStatus, FieldNoteKind, Severity
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Cable, FieldNote, Link, Site, sanctioned_bulk_write
from inventory.services.alerts.lifecycle import alert_raise
from inventory.services.demo.telemetry import DemoIncident, demo_seed_telemetry

# (rule, severity, headline, recommendation, its advice code as the rule engine writes it (the
# repair ranking's prior row: its first action is the recommendation's first step), the A end's
# evidence in the keys the rule itself writes), so a demo alert's page reads as a real one.
_ALERTS = (
    (
        AlertRule.FEC_DEGRADATION,
        Severity.NOTIFY,
        "Corrected FEC errors rising on both ends",
        "Clean and re-seat both ends, then record a power-meter test.",
        "clean_reseat",
        {"metric": "pre_fec_ber", "value": 2.1e-6, "threshold": 1e-6, "fec_limit": 2.4e-4, "bucket_s": 60},
    ),
    (
        AlertRule.RX_POWER_DRIFT,
        Severity.WARNING,
        "Receive power down 1.8 dB since commissioning",
        "Inspect and clean the end-faces; replace the module if the drop follows it.",
        "clean",
        {"rx_power_dbm": -6.1, "baseline_rx_dbm": -4.3, "worst_drop_db": 1.8, "below_module_warning": False},
    ),
    (
        AlertRule.LINK_FLAP,
        Severity.PAGE,
        "Link went down and up 7 times in the last hour",
        "Take the link out of service, re-seat both modules and the cable ends and clean the "
        "connectors; if it flaps again, replace the module at the end that reports the events.",
        "reseat",
        {"link_down": 7, "error_recovery": 0},
    ),
)
FAULTS = (
    "No light on fibre 3 after the row move.",
    "Connector latch broken at the panel end; cable held in by tape.",
    "Jacket crushed under the floor tile at the row end.",
)


def demo_seed_incidents(*, site: Site, seed: int, now: datetime, w: dict) -> dict[str, int]:
    rng = random.Random(seed * 104_729 + 3)
    links = list(
        Link.objects.filter(active=True, a_port__device__rack__row__room__site=site)
        .order_by("pk")
        .values_list("pk", "a_port_id")
    )
    picked = rng.sample(links, min(len(links), 12))  # a few: each goes through alert_raise
    raised: list[DemoIncident] = []
    for n, (link_id, port_id) in enumerate(picked):
        rule, severity, headline, recommendation, code, evidence = _ALERTS[n % len(_ALERTS)]
        opened_at = now - timedelta(hours=rng.randint(1, 30))
        raised.append(
            DemoIncident(link_id=link_id, port_id=port_id, rule=rule, evidence=evidence, opened_at=opened_at)
        )
        alert_raise(
            finding=Finding(
                key=f"{rule}:link:{link_id}",
                rule=rule,
                severity=severity,
                link_id=link_id,
                port_id=port_id,
                headline=headline,
                recommendation=recommendation,
                recommendation_code=code,
                ends={"a": {"port_id": port_id, **evidence}},
            ),
            now=opened_at,
        )
    # Ids only (a model instance per fibre cable cost seconds at 131,072 GPUs), then the three.
    fibre = list(
        Cable.objects.filter(status=CableStatus.IN_PRODUCTION, ends__port__device__rack__row__room__site=site)
        .filter(kind__in=CableKind.fibre())
        .distinct()
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    picked_cables = rng.sample(fibre, min(len(fibre), len(FAULTS)))
    by_pk = Cable.objects.in_bulk(picked_cables)
    faulty = [by_pk[pk] for pk in picked_cables]
    notes = []
    for cable, text in zip(faulty, FAULTS, strict=False):
        notes.append(
            FieldNote(
                cable=cable,
                kind=FieldNoteKind.FAULT,
                text=text,
                status_before=cable.status,
                status_after=CableStatus.FAULTY,
                # reported as the demo is loaded: the cable's own record (created at this moment)
                # must not start after its fault, and the report and its status change are one
                # journal entry, as the fault form makes them
                at=now,
            )
        )
        cable.status = CableStatus.FAULTY
    FieldNote.objects.bulk_create(notes)
    with sanctioned_bulk_write():
        bulk_update_with_history(
            faulty, Cable, ["status"], default_change_reason="demo: fault reported", default_date=now
        )
    # The telemetry of the alerted links says what their alerts say (and a sample of healthy ones).
    counts = demo_seed_telemetry(site=site, seed=seed, now=now, incidents=raised)
    return {"open_alerts": len(picked), "faults": len(faulty), **counts}
