"""The telemetry behind the recorded Prometheus responses in ``tests/data/prometheus/``.

Shared by the tests (which post the same counters through ``POST /api/telemetry/``) and by
``tests/data/prometheus/record.py`` (which backfilled them into a real Prometheus and
recorded its answers). Times are fixed: the recordings hold absolute timestamps.

Degrading scenario, 30 minutes of 10-s scrapes ending at ``END``; topology::

    [gpu-p eth0]--J-P0--[leaf-p Ethernet0]     link 0: healthy (pre-FEC BER 5e-9)
    [gpu-p eth1]--J-P1--[leaf-p Ethernet4]     link 1: leaf-p's receiver climbs to 400x
                                                for the last 12 minutes
"""

from __future__ import annotations

from datetime import UTC, datetime

END = datetime(2026, 11, 29, 12, 0, tzinfo=UTC).timestamp()
START = END - 30 * 60
BASELINE_END = END - 12 * 60  # the climb starts here
STEP_S = 10
LINE_PER_S = 4 * 106.25e9

# (file, end of the query window, window seconds): the two pulls of the degrading scenario.
DEGRADING_PULLS = [
    ("degrading-1148.json", BASELINE_END, 18 * 60),
    ("degrading-1200.json", END, 15 * 60),
]


def _ports(gpu: str, leaf: str) -> list[tuple[str, str]]:
    return [(gpu, "eth0"), (gpu, "eth1"), (leaf, "Ethernet0"), (leaf, "Ethernet4")]


def degrading_counters(gpu: str = "gpu-p", leaf: str = "leaf-p") -> dict[tuple[str, str], list]:
    """{(device, port): [(epoch seconds, {telemetry field: cumulative value})]} every 10 s."""
    climb_from = BASELINE_END - START

    def ber(port: tuple[str, str], t: float) -> float:
        if port == (leaf, "Ethernet4") and t >= climb_from:
            return 2e-6 * (1 + (t - climb_from) / 720)
        return 5e-9

    out = {}
    for port in _ports(gpu, leaf):
        rows, bits, cw, rx, t = [], 0.0, 0.0, 0, 0
        while START + t <= END:
            inc = ber(port, t) * LINE_PER_S * STEP_S
            bits += inc
            cw += inc / 1.2
            rx += int(50e9 * STEP_S)
            rows.append(
                (
                    START + t,
                    {
                        "fec_corrected_bits": int(bits),
                        "fec_corrected_codewords": int(cw),
                        "fec_uncorrectable_codewords": 0,
                        "rx_bits": rx,
                        "link_down_events": 3,  # a lifetime total: old, not a flap now
                    },
                )
            )
            t += STEP_S
        out[port] = rows
    return out


# A site whose switches run a SONiC exporter with its own metric and label names, and per-lane
# receive power: the mapping a site would configure in CABLETRACK_PROMETHEUS_MAPPING.
SONIC_MAPPING = {
    "device_labels": ["hostname"],
    "device_regex": r"^(.*)$",
    "port_labels": ["ifname"],
    "lane_label": "lane",
    "ethtool_stats": [],
    "series": {
        "sonic_port_fec_correctable_codewords": "fec_corrected_codewords",
        "sonic_port_fec_uncorrectable_codewords": "fec_uncorrectable_codewords",
        "sonic_port_fec_corrected_bits": "fec_corrected_bits",
        "sonic_port_rx_bits": "rx_bits",
        "sonic_transceiver_rx_power_dbm": "rx_power_dbm",
        "sonic_transceiver_temperature_celsius": "temperature_c",
    },
}
MAPPED_END = END
MAPPED_PULLS = [("sonic-mapped.json", MAPPED_END, 5 * 60)]
RX_POWER_LANES = [-2.1, -2.0, -1.9, -2.2]


def sonic_series() -> list[tuple[str, dict, list[tuple[float, float]]]]:
    """(metric name, labels, [(epoch seconds, value)]) for leaf-s Ethernet0 and Ethernet4."""
    out = []
    start = MAPPED_END - 10 * 60
    stamps = [start + k * STEP_S for k in range(int((MAPPED_END - start) / STEP_S) + 1)]
    for port in ("Ethernet0", "Ethernet4"):
        base = {"hostname": "leaf-s", "ifname": port, "job": "sonic", "instance": "10.0.0.7:9101"}

        def counter(per_s: float, t0: float = start) -> list[tuple[float, float]]:
            return [(ts, float(int(per_s * (ts - t0)))) for ts in stamps]

        out.append(("sonic_port_fec_correctable_codewords", base, counter(1_500.0)))
        out.append(("sonic_port_fec_uncorrectable_codewords", base, counter(0.0)))
        out.append(("sonic_port_fec_corrected_bits", base, counter(1_800.0)))
        out.append(("sonic_port_rx_bits", base, counter(50e9)))
        out.append(("sonic_transceiver_temperature_celsius", base, [(ts, 41.5) for ts in stamps]))
        for lane, dbm in enumerate(RX_POWER_LANES, start=1):
            out.append(
                ("sonic_transceiver_rx_power_dbm", {**base, "lane": str(lane)}, [(ts, dbm) for ts in stamps])
            )
    # A switch-wide total without an interface label: reported as skipped, not guessed.
    out.append(
        (
            "sonic_port_fec_correctable_codewords",
            {"hostname": "leaf-s", "job": "sonic", "instance": "10.0.0.7:9101"},
            [(ts, 0.0) for ts in stamps],
        )
    )
    return out
