"""What the background pipelines are doing: the rollup queue (waiting, oldest, set aside with
reasons) and the last retest sweep (when, what it could not decide). Read by the page
``/telemetry/pipeline/``, ``GET /api/telemetry/pipeline/`` and ``/metrics``.

A queue that stops draining shows as ``oldest_waiting_s`` growing: the "pipeline stalled"
signal (``cabletrack_telemetry_rollup_oldest_waiting_seconds`` and the alert rule in
``deploy/prometheus/cabletrack-alerts.yml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Min, Q

from inventory.models import Cable, Port, RetestSweepRun, TelemetryIngestBatch

SET_ASIDE_SHOWN = 100  # set-aside queue rows listed (the counts cover them all)


@dataclass(frozen=True)
class SetAsideBatch:
    id: int
    ports: list[dict]
    attempts: int
    last_error: str
    next_attempt_at: datetime | None
    since: datetime


@dataclass
class PipelineState:
    waiting: int = 0  # queue rows never tried yet
    oldest_waiting_s: float = 0.0  # age of the oldest of them (0 when none)
    set_aside: int = 0  # rows set aside after a failed rollup
    set_aside_ports: int = 0
    set_aside_rows: list[SetAsideBatch] = field(default_factory=list)
    sweep_day: str | None = None
    sweep_finished_at: datetime | None = None
    sweep_set_aside: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "rollup": {
                "waiting": self.waiting,
                "oldest_waiting_s": round(self.oldest_waiting_s, 1),
                "set_aside": self.set_aside,
                "set_aside_ports": self.set_aside_ports,
                "set_aside_rows": [
                    {
                        "id": b.id,
                        "ports": b.ports,
                        "attempts": b.attempts,
                        "last_error": b.last_error,
                        "next_attempt_at": b.next_attempt_at,
                        "since": b.since,
                    }
                    for b in self.set_aside_rows
                ],
            },
            "retest_sweep": {
                "day": self.sweep_day,
                "finished_at": self.sweep_finished_at,
                "set_aside": self.sweep_set_aside,
            },
        }


def pipeline_state(*, now: datetime, detail: bool = True) -> PipelineState:
    """The queue in one aggregate query (plus the listed rows and their port names when
    ``detail``), and the latest retest sweep run."""
    state = PipelineState()
    agg = TelemetryIngestBatch.objects.aggregate(
        waiting=Count("pk", filter=Q(attempts=0)),
        oldest=Min("received_at", filter=Q(attempts=0)),
        set_aside=Count("pk", filter=Q(attempts__gt=0)),
    )
    state.waiting, state.set_aside = agg["waiting"], agg["set_aside"]
    if agg["oldest"] is not None:
        state.oldest_waiting_s = max((now - agg["oldest"]).total_seconds(), 0.0)
    if state.set_aside:
        rows = list(
            TelemetryIngestBatch.objects.filter(attempts__gt=0)
            .order_by("id")
            .values_list("id", "port_ids", "attempts", "last_error", "next_attempt_at", "min_ts")
        )
        state.set_aside_ports = len({p for r in rows for p in r[1]})
        if detail:
            shown = rows[:SET_ASIDE_SHOWN]
            names = {
                pk: {"id": pk, "device": dev, "port": name}
                for pk, dev, name in Port.objects.filter(pk__in={p for r in shown for p in r[1]}).values_list(
                    "pk", "device__name", "name"
                )
            }
            state.set_aside_rows = [
                SetAsideBatch(
                    id=r[0],
                    ports=[names.get(p, {"id": p, "device": "", "port": ""}) for p in r[1]],
                    attempts=r[2],
                    last_error=r[3],
                    next_attempt_at=r[4],
                    since=r[5],
                )
                for r in shown
            ]
    run = RetestSweepRun.objects.order_by("-day").first()
    if run is not None:
        state.sweep_day, state.sweep_finished_at = run.day.isoformat(), run.finished_at
        aside = list(run.set_aside or [])
        if aside and detail:
            labels = dict(
                Cable.objects.filter(pk__in=[a.get("cable") for a in aside]).values_list("pk", "label")
            )
            aside = [{**a, "label": labels.get(a.get("cable"), "")} for a in aside]
        state.sweep_set_aside = aside
    return state
