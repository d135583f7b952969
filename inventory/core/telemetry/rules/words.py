"""The words of a finding: headline, recommendation and its code, from the per-end evidence."""

from __future__ import annotations

import numpy as np

from inventory.core.telemetry.rules.frames import Finding
from inventory.core.telemetry.rules.util import fmt_sci

_OTHER = {"a": "b", "b": "a"}


def describe(f: Finding) -> tuple[str, str, str]:
    """Headline, recommendation and its code, from the finding's per-end evidence.

    Errors and power are measured at a receiver: errors seen at end A travelled B -> A, so
    they point at B's transmitting module, the fibre path, or A's receiving module. When only
    one direction is affected the path is shared by both and less likely; when both are, the
    cable (bend, damage, dirty connector on a shared MPO) is the suspect.
    """
    sides = [s for s in ("a", "b", "port") if s in f.ends]
    both = "a" in f.ends and "b" in f.ends
    words = _BY_RULE.get(f.rule)
    if words is None:
        return (f.rule, "", "")
    return words(f, sides, both, _place(sides))


def _place(sides: list[str]) -> str:
    """Where the evidence was seen: "the A end", "the A end and B end", or "this port" (a port
    on no recorded link)."""
    if sides == ["port"]:
        return "this port"
    return "the " + " and ".join(f"{s.upper()} end" for s in sides)


def _rate(x: float) -> str:
    """A rate per second as read: whole from 10 up, else three significant digits (the seed
    preset opens at 0.001 corrected codewords/s: 0.4/s must not read "0/s"), and never in
    exponent notation: a threshold of 25,000/s read "2.5e+04/s" beside a rate of "30000/s"."""
    if x >= 10:
        return f"{x:.0f}"
    return np.format_float_positional(x, precision=3, unique=False, fractional=False, trim="-")


def _receiver(where: str) -> str:
    """The receiver(s) at ``where`` (``_place``): "the A end receiver", "this port's receiver"."""
    return "this port's receiver" if where == "this port" else f"{where} receiver"


def _fec_degradation(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    e = f.ends[sides[0]]
    if e["metric"] == "pre_fec_ber":
        number = fmt_sci
        lim = f" (FEC limit {fmt_sci(e['fec_limit'])})" if e.get("fec_limit") else ""
        head = (
            f"pre-FEC BER {number(e['value'])} at {_receiver(where)}, threshold {number(e['threshold'])}{lim}"
        )
    else:

        def number(x: float) -> str:
            return f"{_rate(x)}/s"

        head = f"corrected codewords {number(e['value'])} at {_receiver(where)}, threshold {number(e['threshold'])}"
    if e.get("baseline"):
        head += f", baseline {number(e['baseline'])}"
    return (head, *_direction_advice(f, both, sides))


def _fec_tail(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    # The codewords of every receiver named (a tail at both ends read only the A end's counts).
    crit = sum(f.ends[s]["codewords_over_80pct"] for s in sides)
    warn = sum(f.ends[s]["codewords_40_80pct"] for s in sides)
    sev = "above 80%" if f.severity == "critical" else "at 40-80%"
    return (
        f"codewords {sev} of the FEC correction limit at {_receiver(where)} "
        f"({crit:.0f} over 80%, {warn:.0f} at 40-80%)",
        *_direction_advice(f, both, sides),
    )


def _fec_uncorrectable(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    total = sum(f.ends[s]["uncorrectable_cw"] for s in sides)
    return (
        f"{total:.0f} uncorrectable codewords in the window at {_receiver(where)}",
        *_direction_advice(f, both, sides),
    )


def _link_flap(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    ev = sum(f.ends[s]["link_down"] + f.ends[s]["error_recovery"] for s in sides)
    return (
        f"{ev:.0f} link-down/error-recovery events at {where}",
        "Re-seat both modules and the cable ends, inspect and clean the connectors; if the link flaps "
        "again replace the module at the end that reports the events, then the cable.",
        "reseat",
    )


def _link_degraded(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    e = f.ends[sides[0]]
    speed, want_speed = e.get("speed_gbps"), e.get("expected_gbps")
    width, want_width = e.get("width"), e.get("expected_width")
    parts = []
    if speed is not None and want_speed is not None and speed < want_speed:
        parts.append(f"running at {speed:g}G, expected {want_speed:g}G")
    if width is not None and want_width is not None and width < want_width:
        parts.append(f"{width:g} of {want_width:g} lanes up")
    return (
        "; ".join(parts) or "running below its recorded speed or width",
        "A lane is down: re-seat the modules and clean the connectors; replace the module if a lane stays dark.",
        "reseat",
    )


def _rx_power_drift(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    """Light lost at a receiver: the same direction logic as the FEC rules, so the advice on one
    link agrees whichever rule speaks (both directions: the shared path; one: the modules)."""
    parts = []
    for s in sides:
        e = f.ends[s]
        lbl = _place([s])
        if e["below_module_warning"]:
            parts.append(
                f"rx power below the module's own warning threshold ({e['module_rx_low_warn_dbm']} dBm) at {lbl}"
            )
        if e["worst_drop_db"] is not None and e["worst_drop_db"] > 0:
            lane = f"lane {e['worst_lane']} " if e.get("worst_lane") else ""
            parts.append(f"{lane}rx power {e['worst_drop_db']:.1f} dB below its own baseline at {lbl}")
    rec, code = _direction_advice(f, both, sides, what="Light lost")
    return ("; ".join(parts) or "rx power drift", rec, code)


def _pfc_storm(f: Finding, sides: list[str], both: bool, where: str) -> tuple[str, str, str]:
    """Names the end that sends the pauses (a host, usually): that is where to look."""
    sender = next((s for s in sides if f.ends[s].get("role") == "sender"), None)
    receiver = next((s for s in sides if f.ends[s].get("role") == "receiver"), None)

    def lbl(s: str | None) -> str:
        return "this port" if s == "port" else f"the {s.upper()} end" if s else "the far end"

    parts = []
    if sender is not None:
        e = f.ends[sender]
        rate = max(e.get("pause_frames_sent_per_s") or 0, e.get("burst_sent_per_s") or 0)
        # Named the sender as the receiver's recorded far end but reporting no pause frames sent
        # (not reporting at all, as often as not): its own count would read "sends 0".
        parts.append(
            f"{lbl(sender)} sends {_rate(rate)} pause frames/s"
            if rate > 0
            else f"{lbl(sender)} (recorded neighbour) sends the pauses"
        )
    elif f.evidence.get("sender_port_id") is not None:
        # A recorded far end that is no row of the window (a host NIC no collector reads): the
        # alert reads "sent by" that port, so the headline names it too.
        parts.append("the recorded far end (reporting no telemetry) sends the pauses")
    else:  # no far end recorded for the receiver (the alert reads "sent by an unrecorded neighbour")
        parts.append("an unrecorded neighbour sends the pauses")
    if receiver is not None:
        e = f.ends[receiver]
        if e.get("paused_share") is not None and e["paused_share"] > 0:
            parts.append(f"{lbl(receiver)} is paused {e['paused_share'] * 100:.0f}% of the time")
        rate = max(e.get("pause_frames_received_per_s") or 0, e.get("burst_received_per_s") or 0)
        if rate:
            parts.append(f"{lbl(receiver)} receives {_rate(rate)}/s")
    who = lbl(sender) if sender or f.evidence.get("sender_port_id") is None else "the recorded far end"
    return (
        "PFC storm: " + "; ".join(parts),
        f"Check the host or switch at {who}, which sends the pause frames: PFC storms are usually a stuck "
        "or slow receiver there (NIC, driver, PCIe, GPU memory pressure), not the cable. Do not replace "
        "the cable for this.",
        "check_host",
    )


_BY_RULE = {
    "fec_degradation": _fec_degradation,
    "fec_tail": _fec_tail,
    "fec_uncorrectable": _fec_uncorrectable,
    "link_flap": _link_flap,
    "link_degraded": _link_degraded,
    "rx_power_drift": _rx_power_drift,
    "pfc_storm": _pfc_storm,
}


def _direction_advice(f: Finding, both: bool, sides: list[str], what: str = "Errors") -> tuple[str, str]:
    """The advice every physical-layer rule shares (FEC, receive power): the same words for the
    same direction, so two rules on one link never contradict each other."""
    if both:
        return (
            f"{what} in both directions: the shared cable path is the suspect. Clean and inspect every "
            "connector on the path and re-seat both modules; if errors persist, replace the cable segment "
            "(bend or damage) and retest.",
            "replace_cable",
        )
    side = sides[0]
    if side == "port":
        return (
            "Clean and re-seat the connectors on the path; if errors persist, replace the far-end module "
            "(its transmitter) or this port's module.",
            "clean",
        )
    far = _OTHER[side].upper()
    other_clean = bool(f.evidence.get("reporting", {}).get(_OTHER[side]))
    return (
        f"{what} only at the {side.upper()} end's receiver (the {far} -> {side.upper()} direction): suspect "
        f"the {far} end's transmitting module or the {side.upper()} end's receiving module. Clean and re-seat "
        f"both ends first; if errors persist, replace the {far} module, then the {side.upper()} module."
        + (" The other direction is clean, so the cable is less likely." if other_clean else ""),
        "replace_module",
    )
