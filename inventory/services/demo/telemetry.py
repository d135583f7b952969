"""Telemetry history for the demo: per-port rollups for the links that carry the demo's alerts
and for a sample of healthy links, so the link health cards, the sparklines and the alerts'
evidence show the same numbers.

Rollups, not raw samples: the pages and the rules read ``PortRollup`` (``fec_series``,
``port_stats``), and 32 hours of rollups for a few dozen links are written in one bulk insert
whatever the plant's size. The rows are what the rollup would make of a collector sampling every
ten minutes: each bucket (``CABLETRACK_TELEMETRY_ROLLUP_SECONDS`` wide) holds one sample and the
ten minutes since the previous one (``covered_s``), its FEC counters as increases over them and
its line bits from the link's lanes and lane rate (as ``rollup_sql`` computes them).

The numbers come from the alert itself: an FEC-degradation alert's ``value`` is the pre-FEC BER
its port's series climbs to by the time the alert opened and holds since; an Rx-power drift's
``baseline_rx_dbm`` and ``rx_power_dbm`` are its port's worst lane before and after; a link flap's
``link_down`` is the link-down events of the hour before it opened. Deterministic by seed.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from inventory.conf import app_settings
from inventory.core.choices import AlertRule
from inventory.models import Link, PortRollup

STEP = timedelta(minutes=10)  # the demo collector's sampling interval (a row per port per step)
HISTORY = timedelta(hours=32)  # the day the pages draw, and the ramp before the oldest alert (30 h)
HEALTHY_LINKS = 24  # healthy links given history beside the alerted ones
DEFAULT_LANES, DEFAULT_LANE_GBAUD = 4, 106.25  # 400G over four 100G PAM4 lanes


@dataclass(frozen=True)
class DemoIncident:
    """One demo alert as ``demo_seed_incidents`` raised it: the numbers its telemetry must show."""

    link_id: int
    port_id: int  # the end whose receiver the evidence describes
    rule: str
    evidence: dict
    opened_at: datetime


def _bucket(t: datetime) -> datetime:
    width = app_settings.telemetry_rollup_seconds
    return datetime.fromtimestamp(int(t.timestamp()) // width * width, tz=t.tzinfo)


def _ber_at(t: datetime, *, base: float, incident: DemoIncident | None) -> float:
    """The port's pre-FEC BER at ``t``: its own baseline, or (an FEC-degradation alert) climbing
    geometrically over the two hours before the alert opened to the alert's value, held since."""
    if incident is None or incident.rule != AlertRule.FEC_DEGRADATION:
        return base
    target = float(incident.evidence["value"])
    start = incident.opened_at - timedelta(hours=2)
    if t <= start:
        return base
    if t >= incident.opened_at:
        return target
    share = (t - start) / (incident.opened_at - start)
    return math.exp(math.log(base) + share * (math.log(target) - math.log(base)))


def _rx_at(t: datetime, lane: int, *, base: list[float], incident: DemoIncident | None) -> float:
    """Lane ``lane``'s lowest Rx power: its baseline, or (an Rx-power drift) the worst lane down
    to the alert's figure from an hour before it opened."""
    if incident is None or incident.rule != AlertRule.RX_POWER_DRIFT:
        return base[lane]
    if lane == 0 and t >= incident.opened_at - timedelta(hours=1):
        return float(incident.evidence["rx_power_dbm"])
    return base[lane]


def _port_rows(
    *, port_id: int, lanes: int, gbaud: float, start: datetime, end: datetime, incident, rng, computed_at
) -> list[PortRollup]:
    base_ber = 10 ** rng.uniform(-9.0, -8.0)
    if incident is not None and incident.rule == AlertRule.RX_POWER_DRIFT:
        first = float(incident.evidence["baseline_rx_dbm"])  # the worst lane's baseline is the alert's
        base_rx = [first] + [round(first + rng.uniform(0.1, 0.8), 2) for _ in range(lanes - 1)]
    else:
        base_rx = [round(rng.uniform(-4.8, -2.2), 2) for _ in range(lanes)]
    flaps: dict[datetime, int] = {}
    if incident is not None and incident.rule == AlertRule.LINK_FLAP:
        hour = [incident.opened_at - STEP * (k + 1) for k in range(int(timedelta(hours=1) / STEP))]
        for _ in range(int(incident.evidence.get("link_down", 0))):
            when = _bucket(rng.choice(hour))
            flaps[when] = flaps.get(when, 0) + 1
    line_rate = lanes * gbaud * 1e9
    covered = STEP.total_seconds()
    rows = []
    t = start
    temp = rng.uniform(42.0, 55.0)
    while t <= end:
        bucket = _bucket(t)
        ber = _ber_at(t, base=base_ber, incident=incident)
        # A steady BER on a flat series; the alerted port's own value exact, the rest a little noisy.
        if not (incident and incident.rule == AlertRule.FEC_DEGRADATION and t >= incident.opened_at):
            ber *= rng.uniform(0.85, 1.15)
        line_bits = covered * line_rate
        bits = int(ber * line_bits)
        rx = [_rx_at(t, lane, base=base_rx, incident=incident) for lane in range(lanes)]
        rows.append(
            PortRollup(
                port_id=port_id,
                bucket=bucket,
                seconds=app_settings.telemetry_rollup_seconds,
                samples=1,
                covered_s=covered,
                fec_corrected_cw=max(1, bits * 10 // 12),  # a corrected codeword holds 1-2 bit errors
                fec_uncorrectable_cw=0,
                fec_corrected_bits=bits,
                line_bits=line_bits,
                pre_fec_ber=bits / line_bits,
                pre_fec_ber_max=bits / line_bits,
                link_down_events=flaps.get(bucket, 0),
                link_error_recovery=0,
                rx_power_min_dbm=rx,
                rx_power_min_any_dbm=min(rx),
                temperature_max_c=round(temp + rng.uniform(-0.5, 0.5), 1),
                computed_at=computed_at,
            )
        )
        t += STEP
    return rows


def demo_seed_telemetry(*, site, seed: int, now: datetime, incidents: list[DemoIncident]) -> dict[str, int]:
    """Rollups over the last 32 hours for the alerted links (the alert's own numbers at its port,
    a healthy series at the far end) and ``HEALTHY_LINKS`` others picked by seed."""
    rng = random.Random(seed * 7919 + 17)
    by_link = {i.link_id: i for i in incidents}
    links = list(
        Link.objects.filter(active=True, a_port__device__rack__row__room__site=site)
        .order_by("pk")
        .values_list("pk", "a_port_id", "b_port_id", "lanes", "lane_rate_gbaud")
    )
    healthy = [row for row in links if row[0] not in by_link]
    chosen = [row for row in links if row[0] in by_link] + rng.sample(
        healthy, min(HEALTHY_LINKS, len(healthy))
    )
    end = _bucket(now)
    start = end - HISTORY
    rows: list[PortRollup] = []
    for link_id, a_port, b_port, lanes, gbaud in chosen:
        incident = by_link.get(link_id)
        for port_id in (a_port, b_port):
            if port_id is None:
                continue
            rows += _port_rows(
                port_id=port_id,
                lanes=lanes or DEFAULT_LANES,
                gbaud=gbaud or DEFAULT_LANE_GBAUD,
                start=start,
                end=end,
                incident=incident if incident is not None and incident.port_id == port_id else None,
                rng=rng,
                computed_at=now,
            )
    PortRollup.objects.bulk_create(rows, batch_size=2000)
    return {"telemetry_links": len(chosen), "telemetry_rollups": len(rows)}
