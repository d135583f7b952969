"""The periodic evaluation: read the telemetry window, run the pure rule engine, apply the
findings through ``alerts_apply``, and learn each healthy port's baseline."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

import numpy as np
from django.db import InterfaceError, OperationalError, connection

from inventory.conf import app_settings
from inventory.core.choices import AlertState
from inventory.core.telemetry import rules as engine
from inventory.models import Alert, PortBaseline
from inventory.selectors.telemetry.alert_shards import AlertShard, alert_shards
from inventory.selectors.telemetry.rule_inputs import rule_inputs
from inventory.services.alerts.lifecycle import EvaluateReport, alerts_apply


def rule_config() -> engine.RuleConfig:
    return engine.RuleConfig.from_dict(app_settings.alert_rules)


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


def alerts_evaluate(
    *,
    now: datetime,
    config: engine.RuleConfig | None = None,
    shard: int | None = None,
    shards: int | None = None,
) -> EvaluateReport:
    """Evaluate every rule over the telemetry window ending at ``now`` and apply the result:
    over every reporting port, or over one alert shard's (``shard`` of ``shards``, by default
    ``CABLETRACK_ALERT_SHARDS``; see ``alert_shards``). A shard's run opens, updates and resolves only its own ports' alerts,
    so the shards' runs together do what one run over every port does."""
    config = config or rule_config()
    lookback = float(app_settings.alert_lookback_s)
    bucket = float(app_settings.alert_bucket_s)
    part = None if shard is None else AlertShard.of(shard, shards or alert_shards())
    inputs = rule_inputs(now=now, config=config, lookback_s=lookback, bucket_s=bucket, shard=part)
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


# The advisory-lock namespace of the alert shards (the second key is the shard); any constant no
# other lock of the application uses (``rollup_queue._SHARD_LOCK`` and ``partitions._LOCK`` are
# others).
_SHARD_LOCK = 0x6374_616C  # "ctal"


def alerts_evaluate_shard(*, now: datetime, shard: int, shards: int | None = None) -> EvaluateReport | None:
    """One alert shard's run, unless another run holds that shard (``None``: a duplicate or
    redelivered task while the first still runs). The lock is the session's, held for the run
    and released at its end, or by PostgreSQL when a killed worker's connection goes. SQLite has
    one writer at a time anyway: there it is not taken."""
    if connection.vendor != "postgresql":
        return alerts_evaluate(now=now, shard=shard, shards=shards)
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", [_SHARD_LOCK, shard])
        if not cur.fetchone()[0]:
            return None
    try:
        return alerts_evaluate(now=now, shard=shard, shards=shards)
    finally:
        try:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_unlock(%s, %s)", [_SHARD_LOCK, shard])
        except (OperationalError, InterfaceError):
            pass  # the connection is gone, and the lock with it


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
    # Open alerts are few (a fleet's worth of ports is not): read them all, not by port.
    alerted = Alert.objects.filter(state=AlertState.OPEN).values_list(
        "port_id", "link__a_port_id", "link__b_port_id"
    )
    skip = {p for t in alerted for p in t if p is not None}
    # Only the baselines a run may change: those due for their hourly refresh. The others
    # (most of them, every run but one an hour) are neither read nor written.
    known = set(PortBaseline.objects.filter(port_id__any=ids).values_list("port_id", flat=True))
    existing = {
        b.port_id: b for b in PortBaseline.objects.filter(port_id__any=ids, updated_at__lte=now - refresh)
    }
    out = []

    def blend_log(old, new):
        if new is None or not np.isfinite(new) or new <= 0:
            return old
        if old is None or old <= 0:
            return float(new)
        return float(10 ** ((1 - weight) * np.log10(old) + weight * np.log10(new)))

    for i, pid in zip(rows, ids, strict=True):
        b = existing.get(pid)
        if pid in skip or (b is None and pid in known):  # alerted, or learnt less than ``refresh`` ago
            continue
        ber = ev.baseline_ber[i]
        cw = ev.baseline_cw_rate[i]
        rx = [None if not np.isfinite(v) else round(float(v), 2) for v in ev.rx_now[i]]
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
