"""The one vocabulary of human words: what every page, list and label shows instead of a code.

Stored values are codes (``in_production``, ``SMF_OS2``, ``fec_tail``, ``pre_fec_ber``); people
read words ("In production", "Single-mode OS2", "FEC histogram tail", "Pre-FEC BER"). The words
of an enumeration live on its ``TextChoices`` in ``choices.py``; this module gathers them into
one lookup (by domain, for the few codes two enumerations share), adds the words of the keys
found in alert evidence and test details, and spells dates the way people read them. Pure: the
template filters ``words`` and ``when`` (``templatetags/cabletrack.py``) and the label renderer
call it.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from inventory.core import choices as c

# Domain -> code -> words. A domain names the enumeration when a code means two things
# ("failed": a module's status, or why its placement ended).
DOMAINS: dict[str, dict[str, str]] = {
    "status": dict(c.CableStatus.choices),
    "kind": dict(c.CableKind.choices),
    "role": dict(c.CableRole.choices),
    "device_role": dict(c.DeviceRole.choices),
    "port_kind": dict(c.PortKind.choices),
    "fabric": dict(c.Fabric.choices),
    "connector": dict(c.ConnectorType.choices),
    "polarity": dict(c.Polarity.choices),
    "module_status": dict(c.TransceiverStatus.choices),
    "placement_end": dict(c.PlacementEnd.choices),
    "rma": dict(c.RmaOutcome.choices),
    "fec": dict(c.FecType.choices),
    "test": dict(c.TestKind.choices),
    "verdict": dict(c.Verdict.choices),
    "direction": dict(c.Direction.choices),
    "severity": dict(c.Severity.choices),
    "alert_state": dict(c.AlertState.choices),
    "rule": dict(c.AlertRule.choices),
    "note": dict(c.FieldNoteKind.choices),
    "retest_reason": dict(c.RetestTriggerReason.choices),
    "reminder": dict(c.ReminderKind.choices),
    "batch": dict(c.LabelBatchStatus.choices),
    "label_kind": dict(c.LabelKind.choices),
    "token": dict(c.TokenKind.choices),
    "digest": dict(c.DigestStatus.choices),
    "reminder_mode": dict(c.ReminderMode.choices),
}

# Keys of alert evidence, test details and history changes: what a person calls them.
KEYS: dict[str, str] = {
    "a": "A end",
    "b": "B end",
    "port": "Port",
    "pre_fec_ber": "Pre-FEC BER",
    "post_fec_ber": "Post-FEC BER",
    "ber": "BER",
    "fec_limit": "FEC limit",
    "fec": "FEC",
    "pmd": "PMD",
    "value": "Value",
    "threshold": "Threshold",
    "baseline": "Baseline",
    "metric": "Measured",
    "series": "Samples",
    "bucket_s": "Sample interval (s)",
    "link_down": "Link-down events",
    "error_recovery": "Error recoveries",
    "speed_gbps": "Speed (Gb/s)",
    "expected_gbps": "Expected speed (Gb/s)",
    "width": "Lanes up",
    "expected_width": "Lanes expected",
    "uncorrectable_cw": "Uncorrectable codewords",
    "buckets_with_uncorrectable": "Intervals with uncorrectable codewords",
    "codewords_over_80pct": "Codewords over 80% of the FEC limit",
    "codewords_40_80pct": "Codewords at 40-80% of the FEC limit",
    "rx_power_dbm": "Rx power (dBm)",
    "tx_power_dbm": "Tx power (dBm)",
    "baseline_rx_dbm": "Baseline Rx power (dBm)",
    "worst_drop_db": "Largest drop (dB)",
    "module_rx_low_warn_dbm": "Module Rx low warning (dBm)",
    "below_module_warning": "Below the module's warning",
    "tested_loss_db": "Tested loss (dB)",
    "live_loss_db": "Live loss from DOM (dB)",
    "pause_frames_per_s": "Pause frames per second",
    "paused_share": "Share of time paused",
    "series_pause_frames": "Pause frames",
    "rail": "Direction",
    "seen": "Neighbour seen",
    "expected": "Neighbour expected",
    "seen_port_id": "Port seen",
    "expected_port_id": "Port expected",
    "recorded_serial": "Recorded serial",
    "reported_serial": "Reported serial",
    "preset": "Preset",
    "history": "Earlier readings",
    "length_m": "Length (m)",
    "part_number": "Part number",
    "serial_a": "Serial (A end)",
    "serial_b": "Serial (B end)",
    "install_date": "Installed",
    "retest_due": "Retest due",
    "replaced_by": "Replaced by",
    "retired_at": "Retired",
    "margin_db": "Margin (dB)",
    "loss_db": "Loss (dB)",
    "budget_db": "Budget (dB)",
    "budget_source": "Budget from",
    "connector_type": "Connector",
    "fibre_count": "Fibres",
    "wavelength_nm": "Wavelength (nm)",
    "reflectance_db": "Reflectance (dB)",
    "orl_db": "ORL (dB)",
}

_ALL: dict[str, str] = {}
for _domain in DOMAINS.values():
    for _code, _word in _domain.items():
        _ALL.setdefault(_code, _word)
_ACRONYMS = {"fec": "FEC", "ber": "BER", "pmd": "PMD", "rx": "Rx", "tx": "Tx", "dom": "DOM", "pfc": "PFC"}
_SNAKE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")


def _from_snake(code: str) -> str:
    """``some_new_key`` -> ``Some new key`` (known acronyms kept): the fallback for a new code."""
    parts = [_ACRONYMS.get(p, p) for p in code.split("_")]
    first = parts[0]
    parts[0] = first if first in _ACRONYMS.values() else first[:1].upper() + first[1:]
    return " ".join(parts)


def word(value: object, domain: str = "") -> str:
    """The human words for a code: ``word("in_production")`` -> ``"In production"``.

    ``domain`` (a key of ``DOMAINS``) picks the enumeration when a code is in two. A value that
    is no known code and not snake_case is returned as it is (a name, a label, a number).
    """
    if value is None:
        return ""
    text = str(value)
    if domain:
        found = DOMAINS.get(domain, {}).get(text)
        if found is not None:
            return found
    found = _ALL.get(text) or KEYS.get(text)
    if found is not None:
        return found
    return _from_snake(text) if _SNAKE.match(text) else text


# Statuses that put the plant at risk, and the verdict colour class of each verdict: one place,
# so a list, a page and a label never disagree (an unknown verdict is grey, never green).
VERDICT_TONE = {
    c.Verdict.PASS: "ok",
    c.Verdict.MARGINAL: "warn",
    c.Verdict.FAIL: "bad",
    c.Verdict.UNKNOWN: "none",
}


def verdict_tone(verdict: str) -> str:
    return VERDICT_TONE.get(verdict, "none")


def human_date(value: date | datetime | None, *, today: date | None = None) -> str:
    """``1 Dec 2026``; within this year ``1 Dec``; ``today`` / ``yesterday`` when near."""
    if value is None:
        return ""
    d = value.date() if isinstance(value, datetime) else value
    if today is not None:
        if d == today:
            return "today"
        if d == today - timedelta(days=1):
            return "yesterday"
        if d == today + timedelta(days=1):
            return "tomorrow"
        if d.year == today.year:
            return f"{d.day} {d:%b}"
    return f"{d.day} {d:%b %Y}"


def human_when(value: datetime | date | None, *, today: date | None = None) -> str:
    """A moment as people say it: ``today 14:05``, ``3 Nov 09:00``, ``3 Nov 2025 09:00`` (UTC)."""
    if value is None:
        return ""
    if not isinstance(value, datetime):
        return human_date(value, today=today)
    return f"{human_date(value, today=today)} {value:%H:%M}"


# History reasons are written by the code that changed the record ("seed_demo --gpus 256 --seed
# 1", "olts test recorded: fail", "alert fec_degradation #12: ..."): the page says them in words.
_SEED_REASON = re.compile(r"seed_demo --gpus (\d+) --seed (\d+)")
_TEST_REASON = re.compile(r"\b([a-z]+) test recorded: ([a-z]+)\b")
_ALERT_REASON = re.compile(r"\balert ([a-z0-9_]+) #(\d+)")
_CODE_IN_TEXT = re.compile(r"\b[a-z]{2,}(?:_[a-z0-9]+)+\b")


def human_reason(text: str | None) -> str:
    """A history reason in words: codes inside it become the words the pages use.

    ``seed_demo --gpus 256 --seed 1`` -> ``demo data loaded (256 GPUs, seed 1)``;
    ``olts test recorded: fail`` -> ``Power meter (OLTS) test recorded: fail``;
    ``alert fec_degradation #12: ...`` -> ``alert #12 (FEC degradation): ...``; any other
    snake_case code in the text goes through ``word``. Free text is left as written.
    """
    if not text:
        return ""
    out = _SEED_REASON.sub(lambda m: f"demo data loaded ({m.group(1)} GPUs, seed {m.group(2)})", text)
    out = _TEST_REASON.sub(
        lambda m: f"{word(m.group(1), 'test')} test recorded: {word(m.group(2), 'verdict').lower()}", out
    )
    out = _ALERT_REASON.sub(lambda m: f"alert #{m.group(2)} ({word(m.group(1), 'rule')})", out)
    return _CODE_IN_TEXT.sub(lambda m: word(m.group(0)).lower(), out)
