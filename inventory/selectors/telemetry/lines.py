"""Each port's line (lanes and per-lane signalling rate): what turns corrected bits into a
pre-FEC BER. One home for the rollup and the rule engine's sample steps."""

from __future__ import annotations

from django.db.models import Q

from inventory.core.telemetry.rates import lane_signalling_gbps
from inventory.core.telemetry.rollup import PortLine
from inventory.models import Link, Port


def port_lines(port_ids) -> dict[int, PortLine]:
    """``port_ids``: anything ``__in=`` takes (a list, or an array subquery for thousands)."""
    ports = {
        pid: (lanes, speed)
        for pid, lanes, speed in Port.objects.filter(pk__in=port_ids).values_list(
            "pk", "lane_count", "speed_gbps"
        )
    }
    rates: dict[int, float] = {}
    links = Link.objects.filter(Q(a_port_id__in=port_ids) | Q(b_port_id__in=port_ids), active=True)
    for a, b, rate in links.values_list("a_port_id", "b_port_id", "lane_rate_gbaud"):
        if rate:
            rates[a] = rates[b] = rate
    out = {}
    for pid, (lanes, speed) in ports.items():
        out[pid] = PortLine(
            lanes=lanes or 1,
            lane_gbps=lane_signalling_gbps(speed_gbps=speed, lanes=lanes, lane_rate_gbaud=rates.get(pid)),
        )
    return out
