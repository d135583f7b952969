"""Rule thresholds: FEC facts, severities, the ``Thresholds`` profiles, presets and ``RuleConfig``."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

# FEC facts (pre-FEC BER limit, correctable symbols) and the severity ranking live with their
# choices; re-exported here for the rule modules.
from inventory.core.choices import FEC_LIMITS, SEVERITY_ORDER  # noqa: F401

# Rules whose finding points at the physical path (they, and a spike that names a cable, move it
# to "degraded": ``core.decision.alert_degrades``).
PHYSICAL_RULES = frozenset(
    {"link_flap", "link_degraded", "fec_degradation", "fec_tail", "fec_uncorrectable", "rx_power_drift"}
)


@dataclass(frozen=True)
class Thresholds:
    """One profile of thresholds and durations (seconds). ``None`` switches a check off."""

    # fec_degradation: the receiver's pre-FEC BER (or corrected-codeword rate), measured over
    # sliding ``fec_span_s`` windows of samples, above max(baseline x factor, floor), or above a
    # fraction of the FEC limit whatever the baseline, in every such window ending in the last
    # ``fec_hold_s`` (which ``coverage`` of must carry data). Windows end at every sample, so
    # whether a degradation opens never depends on where the samples fall on the bucket grid.
    fec_mode: str = "ber"  # "ber": pre-FEC BER (codeword rate when bits are missing); "cw_rate"
    fec_hold_s: float = 600.0
    fec_ber_factor: float | None = 10.0
    fec_ber_floor: float = 1e-8
    fec_limit_fraction: float | None = 0.1
    fec_cw_rate_factor: float | None = 10.0
    fec_cw_rate_floor: float = 10_000.0
    fec_span_s: float = 60.0  # the sliding window rates and tail counts are measured over
    coverage: float = 0.8  # share of a window's (and a hold period's) time that must carry data
    # Hold-open hysteresis, every rule: an open alert stays open while its condition shows in
    # this window at ``hold_ratio`` of the opening threshold (rates, BER, counts) or within
    # ``rx_clear_db`` of it (receive power), so an alert hovering at its threshold does not
    # close and reopen (and mail) every evaluation; it closes once clearly below.
    clear_s: float = 900.0
    hold_ratio: float = 0.5
    # fec_tail: codewords with 40-80% (warning) or >80% (critical) of the correctable symbol
    # errors, at least ``tail_min_cw`` of them in sliding ``fec_span_s`` windows of samples, in
    # ``tail_min_spans`` episodes of the last ``tail_window_s`` (separate bursts, however the
    # samples split them, or a tail lasting that many spans).
    tail_window_s: float = 900.0
    tail_min_cw: float = 10.0
    tail_min_spans: int = 3
    # fec_uncorrectable: at least this many sample intervals with uncorrectable codewords in a
    # sliding window of ``uncorr_window_s`` ending now (counted per sample, never per bucket,
    # so a burst is caught wherever the samples fall on the bucket grid). A single one is a
    # retransmitted packet, not a stall.
    uncorr_window_s: float = 600.0
    uncorr_min_events: int = 3
    # link_flap: link-down events plus link error recoveries in the window.
    flap_window_s: float = 900.0
    flap_min_events: int = 1
    # rx_power_drift: the worst lane's receive power below that lane's own baseline (learned
    # while the link was healthy and tested) by more than ``rx_drift_db`` in every bucket of
    # ``rx_hold_s``. Never DOM-derived "live loss" against the OLTS-tested loss: module DOM
    # readings are accurate to about +-3 dB (SFF-8636, CMIS), a lane's own offset is stable.
    rx_drift_db: float | None = 2.0
    rx_hold_s: float = 300.0
    rx_clear_db: float = 1.0
    # pfc_storm, per direction: pause frames sent by a port name it as the sender; received
    # pauses (or the share of time paused, from pause duration) point at the far end. The
    # design's presets (the seed article's): above ``pfc_burst_rate``/s over any sliding
    # ``pfc_burst_s`` of samples, or above ``pfc_sustained_rate``/s on average over
    # ``pfc_sustained_s``. Pause-frame rates are judged whether or not a duration is reported
    # unless ``pfc_rates_always`` is False.
    pfc_window_s: float = 300.0
    pfc_share: float | None = 0.2
    pfc_burst_rate: float | None = 100.0
    pfc_burst_s: float = 60.0
    pfc_sustained_rate: float | None = 10.0
    pfc_sustained_s: float = 600.0
    pfc_rates_always: bool = True
    # tail_latency_spike (collective timings, per job and communicator): the slowest operation
    # of a series (collective and message size) above ``spike_factor`` x the ``spike_quantile``
    # of its own operations in the ``spike_baseline_s`` before the judged ``spike_hold_s`` (at
    # least ``spike_baseline_min_ops`` of them), in every minute of ``spike_hold_s`` that
    # carries operations (``coverage`` of them must). The seed's team: 3x P99 for 5 minutes.
    spike_factor: float | None = 3.0
    spike_quantile: float = 0.99
    spike_hold_s: float = 300.0
    spike_baseline_s: float = 3600.0
    spike_baseline_min_ops: int = 20
    # Safe to drain: a leaf keeps at least this share of its uplinks in service (CorrOpt).
    drain_min_uplink_share: float = 0.75


PRESETS: dict[str, Thresholds] = {
    "default": Thresholds(),
    # The seed article's Grafana rules, verbatim: fec_degradation is
    # rate(fec_correctable_errors[1m]) > 0.001 for 10m (any corrected error, no baseline);
    # pfc_storm is rate(pfc_pause_frames[1m]) > 100 for 1m, and > 10/s sustained (the
    # default's rates too; the seed judges no pause duration).
    "seed": Thresholds(
        fec_mode="cw_rate",
        fec_ber_factor=None,
        fec_limit_fraction=None,
        fec_cw_rate_factor=None,
        fec_cw_rate_floor=0.001,
        pfc_share=None,
        pfc_burst_rate=100.0,
        pfc_burst_s=60.0,
        pfc_sustained_rate=10.0,
        pfc_sustained_s=600.0,
        pfc_rates_always=True,
    ),
}


def thresholds_from(base: Thresholds | str, overrides: dict | None = None) -> Thresholds:
    """A profile from a preset name (or profile) and a dict of field overrides."""
    if isinstance(base, str):
        if base not in PRESETS:
            raise ValueError(f"Unknown rule preset {base!r}; known: {', '.join(PRESETS)}")
        base = PRESETS[base]
    if not overrides:
        return base
    names = {f.name for f in fields(Thresholds)}
    unknown = set(overrides) - names - {"preset"}
    if unknown:
        raise ValueError(f"Unknown rule thresholds: {', '.join(sorted(unknown))}")
    if "preset" in overrides:
        base = thresholds_from(overrides["preset"])
    return replace(base, **{k: v for k, v in overrides.items() if k != "preset"})


@dataclass
class RuleConfig:
    """Which profile a link uses: its class first, then its PMD, else the default."""

    default: Thresholds = field(default_factory=Thresholds)
    by_class: dict[str, Thresholds] = field(default_factory=dict)
    by_pmd: dict[str, Thresholds] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, raw: dict | None) -> RuleConfig:
        """From settings: ``{"preset": "default", "by_class": {"rail": {...}}, "by_pmd": {...}}``."""
        raw = raw or {}
        default = thresholds_from(raw.get("preset", "default"), raw.get("overrides"))
        return cls(
            default=default,
            by_class={k: thresholds_from(default, v) for k, v in (raw.get("by_class") or {}).items()},
            by_pmd={k: thresholds_from(default, v) for k, v in (raw.get("by_pmd") or {}).items()},
        )

    def profiles(self) -> list[Thresholds]:
        out = [self.default]
        for t in [*self.by_class.values(), *self.by_pmd.values()]:
            if t not in out:
                out.append(t)
        return out

    def profile_index(self, *, link_class: str, pmd: str, profiles: list[Thresholds]) -> int:
        t = self.by_class.get(link_class) or self.by_pmd.get(pmd) or self.default
        return profiles.index(t)


# The window each rule judges over: after a replacement, the alert watches this long (and at
# least ``clear_s``) before it may resolve, since the samples before the repair fill it until then.
_RULE_WINDOW = {
    "link_flap": "flap_window_s",
    "link_degraded": "clear_s",
    "fec_degradation": "fec_hold_s",
    "fec_tail": "tail_window_s",
    "fec_uncorrectable": "uncorr_window_s",
    "rx_power_drift": "rx_hold_s",
    "pfc_storm": "pfc_sustained_s",
}


def clean_window_s(rule: str, t: Thresholds) -> float:
    """Seconds of clean telemetry that settle an alert of ``rule`` after its part was replaced."""
    name = _RULE_WINDOW.get(rule)
    own = float(getattr(t, name)) if name else 0.0
    return max(own, float(t.clear_s))
