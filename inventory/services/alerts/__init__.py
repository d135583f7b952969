"""Alert services: ``lifecycle`` (open, update, resolve), ``evaluate`` (the periodic run),
``silencing`` (maintenance windows, acknowledge, silence), ``notify`` (mail), ``naming``,
``repairs`` (repairs recorded on alerts, judged by the telemetry, ranking the recommendations)."""

from inventory.services.alerts.evaluate import (
    EVALUATED_RULES,
    alerts_evaluate,
    alerts_evaluate_shard,
    baselines_learn,
    rule_config,
)
from inventory.services.alerts.lifecycle import DEGRADABLE, EvaluateReport, alert_raise, alerts_apply
from inventory.services.alerts.notify import CLAIM_LEASE, alert_notifications_send, alert_recipients
from inventory.services.alerts.repairs import (
    JudgeReport,
    recommendations_refresh,
    repair_record,
    repairs_judge,
)
from inventory.services.alerts.silencing import (
    Silence,
    alert_acknowledge,
    alert_silence,
    maintenance_active,
    maintenance_end,
    maintenance_start,
)

__all__ = [
    "CLAIM_LEASE",
    "DEGRADABLE",
    "EVALUATED_RULES",
    "EvaluateReport",
    "JudgeReport",
    "Silence",
    "alert_acknowledge",
    "alert_notifications_send",
    "alert_raise",
    "alert_recipients",
    "alert_silence",
    "alerts_apply",
    "alerts_evaluate",
    "alerts_evaluate_shard",
    "baselines_learn",
    "maintenance_active",
    "maintenance_end",
    "maintenance_start",
    "recommendations_refresh",
    "repair_record",
    "repairs_judge",
    "rule_config",
]
