"""An independent generator of realistic, HEALTHY 400G optics telemetry, as collectors deliver it.

Written from the physics and the collectors' habits, not from the rule engine's code (it imports
nothing from ``inventory``): what a rule flags on this data is a false alarm.

Per port (one end of a 400GBASE-DR4 link, 4 lanes of 106.25 Gb/s, KP4 RS(544,514) FEC, T = 15):

* Samples every 10 s, each port at its own phase on the clock with +-0.4 s jitter.
* Pre-FEC BER log-uniform 1e-9..1e-8 per port (hundreds to thousands of corrected codewords per
  second) wandering +-20% minute to minute; no uncorrectable codeword; the FEC histogram with its
  healthy tail: bin k gets about 1/30**k of bin 1, and now and then a single codeword lands in
  bins 6-13 (a healthy PAM4 link has them).
* Module DOM per lane: each lane reads a stable offset within the +-3 dB accuracy SFF-8636/CMIS
  allow (so "far tx minus near rx" is anything from about -5 to +7 dB of "loss"), plus a slow
  thermal wobble (+-0.3 dB over half an hour) and +-0.15 dB reading noise. The module's own
  rx low-warning threshold (-10.4 dBm, DR4 datasheets) is sent with the identity.
* PFC: a GPU NIC port sends and receives a pause frame now and then (Poisson, 0.05-0.5/s), with
  the time it was paused; switch ports likewise.
* Counters are cumulative unsigned 64-bit: some ports start past 2**63; a few ports reset every
  counter to zero once in the hour (a NIC reboot or a counter clear); lifetime link-down counts
  are old and do not move.
* Delivery: identity (module serial, LLDP neighbour) every 5 minutes; 3% of samples posted again
  (a collector retry); 2% held back 4-8 minutes and posted late
  (after the rollup of their minute ran).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

LANES = 4
LANE_GBPS = 106.25e9
STEP_S = 10.0
BINS = 16  # KP4: 0..15 symbol errors per codeword
U63 = 1 << 63


@dataclass
class PortSpec:
    device: str
    port: str
    serial: str | None = None  # the module's EEPROM serial (None: not reported)
    neighbor: tuple[str, str] | None = None  # what LLDP reports
    optical: bool = True  # DAC ends have no DOM
    gpu: bool = False


@dataclass
class _State:
    spec: PortSpec
    phase: float
    ber: float
    base: int
    rx_offset: list[float]
    tx_offset: list[float]
    wobble_phase: float
    pfc_rate: tuple[float, float]
    reset_at: float | None
    counters: dict[str, int] = field(default_factory=dict)
    hist: list[int] = field(default_factory=lambda: [0] * BINS)
    next_t: float = 0.0
    last_identity: float = -1e9


class HealthyFleet:
    """Call ``samples_until(t)`` with increasing ``t`` (seconds from ``start``); each call returns
    the batch a collector would post then (new samples, retries and late ones)."""

    def __init__(self, ports: list[PortSpec], *, start: datetime, seed: int = 1):
        self.rng = random.Random(seed)
        self.start = start
        self.held: list[tuple[float, dict]] = []  # (post at, sample)
        self.states = [self._state(p) for p in ports]

    def _state(self, spec: PortSpec) -> _State:
        r = self.rng
        base = (U63 + r.randrange(10**12)) if r.random() < 0.1 else r.randrange(10**9)
        st = _State(
            spec=spec,
            phase=r.uniform(0, STEP_S),
            ber=10 ** r.uniform(-9, -8),
            base=base,
            rx_offset=[r.uniform(-3.0, 3.0) for _ in range(LANES)],
            tx_offset=[r.uniform(-2.0, 2.0) for _ in range(LANES)],
            wobble_phase=r.uniform(0, 2 * math.pi),
            pfc_rate=(r.uniform(0.05, 0.5), r.uniform(0.05, 0.5)),
            reset_at=r.uniform(300, 3300) if r.random() < 0.03 else None,
        )
        st.next_t = st.phase
        for name in (
            "fec_corrected_codewords",
            "fec_corrected_bits",
            "fec_uncorrectable_codewords",
            "rx_bits",
            "pfc_pause_rx",
            "pfc_pause_tx",
            "pfc_pause_duration_us",
        ):
            st.counters[name] = base
        st.counters["link_down_events"] = r.randrange(0, 4)
        st.counters["link_error_recovery"] = r.randrange(0, 3)
        return st

    def _poisson(self, lam: float) -> int:
        if lam <= 0:
            return 0
        if lam > 50:
            return max(0, int(round(self.rng.gauss(lam, math.sqrt(lam)))))
        k, p, limit = 0, 1.0, math.exp(-lam)
        while True:
            p *= self.rng.random()
            if p <= limit:
                return k
            k += 1

    def _advance(self, st: _State, t: float) -> dict:
        r = self.rng
        c = st.counters
        if st.reset_at is not None and t >= st.reset_at:
            for k in c:
                if k not in ("link_down_events", "link_error_recovery"):
                    c[k] = 0
            st.hist = [0] * BINS
            st.reset_at = None
        ber = st.ber * math.exp(r.gauss(0, 0.2))
        line = LANES * LANE_GBPS * STEP_S
        bits = self._poisson(ber * line)
        cw = int(bits / 1.25)
        c["fec_corrected_bits"] += bits
        c["fec_corrected_codewords"] += cw
        c["rx_bits"] += int(0.6 * 400e9 * STEP_S)
        total_cw = int(line / 5440)
        st.hist[0] += total_cw - cw
        for k in range(1, 6):
            st.hist[k] += int(cw / 30 ** (k - 1)) if k > 1 else cw
        if r.random() < 0.02:  # a single high-bin codeword: the healthy tail
            st.hist[r.randint(6, 13)] += 1
        rx_p, tx_p = st.pfc_rate
        if st.spec.gpu or r.random() < 0.5:
            got = self._poisson(rx_p * STEP_S)
            c["pfc_pause_rx"] += got
            c["pfc_pause_tx"] += self._poisson(tx_p * STEP_S)
            c["pfc_pause_duration_us"] += int(got * 3.3)
        sample = {
            "device": st.spec.device,
            "port": st.spec.port,
            "ts": (self.start + timedelta(seconds=t + r.uniform(-0.4, 0.4))).isoformat(),
            **dict(c),
            "fec_hist": list(st.hist),
            "temperature_c": round(52 + 3 * math.sin(t / 900 + st.wobble_phase) + r.gauss(0, 0.3), 2),
        }
        if st.spec.optical:
            wobble = 0.3 * math.sin(2 * math.pi * t / 1800 + st.wobble_phase)
            sample["rx_power_dbm"] = [round(-1.5 + o + wobble + r.gauss(0, 0.15), 2) for o in st.rx_offset]
            sample["tx_power_dbm"] = [round(1.0 + o + r.gauss(0, 0.1), 2) for o in st.tx_offset]
        if t - st.last_identity >= 300:
            st.last_identity = t
            if st.spec.serial:
                sample["module_serial"] = st.spec.serial
            if st.spec.neighbor:
                sample["neighbor_device"], sample["neighbor_port"] = st.spec.neighbor
            if st.spec.optical:
                sample["rx_power_low_warn_dbm"] = -10.4
                sample["rx_power_low_alarm_dbm"] = -14.4
        return sample

    def samples_until(self, t: float) -> list[dict]:
        """Everything a collector posts up to ``t`` seconds after ``start``."""
        r = self.rng
        out: list[dict] = []
        for st in self.states:
            while st.next_t <= t:
                s = self._advance(st, st.next_t)
                st.next_t += STEP_S
                roll = r.random()
                if roll < 0.02:  # late: posted 4-8 minutes after it was taken
                    self.held.append((st.next_t + r.uniform(240, 480), s))
                    continue
                out.append(s)
                if roll < 0.05:  # a retry: the same sample posted again later
                    self.held.append((st.next_t + r.uniform(10, 60), dict(s)))
        due = [s for at, s in self.held if at <= t]
        self.held = [(at, s) for at, s in self.held if at > t]
        return out + due

    def flush(self) -> list[dict]:
        """Whatever was still held back."""
        out = [s for _, s in self.held]
        self.held = []
        return out
