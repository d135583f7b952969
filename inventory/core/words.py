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
from decimal import ROUND_HALF_UP, Decimal

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
    # A port's neighbour against its recorded far end: the bring-up report and the
    # reconciliation (``selectors.plant.wiring``, ``selectors.telemetry.reconciliation_rows``).
    "neighbour": {
        "ok": "ok",
        "miswire": "miswired",
        "unrecorded": "no cable recorded",
        "no_neighbour": "no neighbour seen",
        "unused": "nothing recorded or seen",
    },
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
    "series": "Recent samples",
    "bucket_s": "Sample interval (s)",
    "link_down": "Link-down events",
    "error_recovery": "Error recoveries",
    "speed_gbps": "Speed (Gb/s)",
    "expected_gbps": "Expected speed (Gb/s)",
    "width": "Lanes up",
    "expected_width": "Lanes expected",
    "uncorrectable_cw": "Uncorrectable codewords",
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
    # alert evidence: what each rule measured (inventory/core/telemetry/rules/), the link it is on
    # (services/alerts/naming.py), the identity check at ingest and the test comparison.
    "link": "Link",
    "class": "Link class",
    "kind": "Kind",
    "corrected_cw_per_s": "Corrected codewords per second",
    "samples_with_uncorrectable": "Samples with uncorrectable codewords",
    "series_over_80pct": "Recent codewords over 80% of the FEC limit",
    "worst_lane": "Lane with the largest drop",
    "role": "Role",
    "pause_frames_sent_per_s": "Pause frames sent per second",
    "pause_frames_received_per_s": "Pause frames received per second",
    "burst_sent_per_s": "Peak pause frames sent per second",
    "burst_received_per_s": "Peak pause frames received per second",
    "series_pause_sent": "Recent pause frames sent",
    "series_pause_received": "Recent pause frames received",
    "reporting": "Telemetry from",
    "sender_reporting": "Sender reports telemetry",
    "reported_vendor": "Reported vendor",
    "reported_part": "Reported part number",
    "recorded_kind": "Recorded as",
    "ts": "Reported",
    "reopened": "Reopened",
    "threshold_db": "Threshold (dB)",
    "fibres": "Fibres whose loss rose",
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


def and_list(items) -> str:
    """``a``, ``a and b``, ``a, b and c``: several things named in one sentence."""
    items = [str(i) for i in items]
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def alerts_named(ids) -> str:
    """``alert #5``, ``alerts #5 and #7``: the alerts one action was recorded on."""
    ids = list(ids)
    return ("alert " if len(ids) == 1 else "alerts ") + and_list(f"#{i}" for i in ids)


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


def message_size(n: int) -> str:
    """A collective's message size as NCCL and nccl-tests say it, in binary units: "256 MiB"."""
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:g} {unit}"
    return f"{n} B"


def metres(value: float | Decimal | None) -> str:
    """A cable's length as people write it: ``Decimal("3.50")`` -> ``"3.5 m"``, ``4`` -> ``"4 m"``,
    ``2.25`` -> ``"2.25 m"`` (two places at most: lengths are recorded to the centimetre); "" when
    not recorded. The cable page and the desk list both say it this way."""
    if value is None or value == "":
        return ""
    shown = Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP).normalize()
    return f"{shown:f} m"


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


def human_age(seconds: float) -> str:
    """How long ago, as people say it: ``just now``, ``1 minute ago``, ``12 minutes ago``,
    ``3 hours ago`` (past two hours)."""
    if seconds >= 2 * 3600:
        return f"{seconds / 3600:.0f} hours ago"
    minutes = max(0, round(seconds / 60))
    return "just now" if minutes == 0 else ("1 minute ago" if minutes == 1 else f"{minutes} minutes ago")


def human_month(value: date | str | None) -> str:
    """A calendar month as people say it: ``December 2026`` (for ``2026-12`` or a day in it).
    Anything else is returned as it is: a page never shows less than it was given."""
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            value = date.fromisoformat(f"{value[:7]}-01")
        except ValueError:
            return value
    return f"{value:%B %Y}"


def _as_shown(value: float | Decimal, places: int) -> Decimal:
    """A figure as Django's ``floatformat`` shows it at ``places`` decimals (half up, from the
    number's shortest decimal spelling)."""
    return Decimal(str(value)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)


def factor_places(
    value: float, *, times: float, product: float, places: int, least: int = 1, most: int = 4
) -> int:
    """How many decimals to show ``value`` with, so that it, times ``times`` as shown, gives
    ``product`` as shown at ``places`` decimals: "0.96 expected stalls × 3.5 h = 3.4 h lost", not
    "1.0 × 3.5 h = 3.4 h"; "64 GPUs for 0.139 h = 8.9 GPU-hours", not "for 0.1 h". The fewest
    from ``least``; ``most`` when none up to it does (a reader then sees the closest figure)."""
    want = _as_shown(product, places)
    by = Decimal(str(times))
    for n in range(least, most + 1):
        if _as_shown(_as_shown(value, n) * by, places) == want:
            return n
    return most


def ratio_places(value: float, *, base: float, places: int, most: int = 3) -> tuple[int, int] | None:
    """How many decimals to show the ratio ``value / base`` and ``base`` with, so that the two as
    shown multiply to ``value`` as shown at ``places`` decimals (within its rounding): "29.4 ms =
    10.35x its P99 2.84 ms", not "29.4 ms = 10.3x its P99 2.8 ms" (10.3 x 2.8 = 28.8).
    ``(ratio, base)``: the fewest for ``base`` from ``places``, then for the ratio from one, each
    up to ``most``; None when no such pair does (a ratio in the thousands): then say "about"."""
    ratio, want = value / base, _as_shown(value, places)
    half = Decimal(5).scaleb(-places - 1)
    for nb in range(places, most + 1):
        shown_base = _as_shown(base, nb)
        for nr in range(1, 4):
            if abs(_as_shown(ratio, nr) * shown_base - want) <= half:
                return nr, nb
    return None


def shown(value: float, places: int) -> str:
    """``value`` at ``places`` decimals as the pages show figures (half up, thousands grouped)."""
    return f"{_as_shown(value, places):,}"


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


# Alert evidence the page never lists as "label: value" rows: what the alert page lays out
# itself (ports, modules, the path, the per-end cards), the product's own bookkeeping (the
# recommendation's code, earlier readings) and record ids (every ``*_id`` key too).
EVIDENCE_HIDDEN = frozenset(
    {
        "ports",
        "modules",
        "segments",
        "ends",
        "history",
        "recommendation_code",
        "advice",
        "id",
        "baseline_test",
        "collective",
        "suspects",
        "host_ids",
    }
)
_ENDS = {"a", "b", "port"}
_UNIT = re.compile(r"^(.*) \(([^)]+)\)$")  # "Speed (Gb/s)": the unit is said with the value
_ROLE = {"sender": "sends the pause frames", "receiver": "receives the pause frames"}


def _evidence_value(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if key.endswith("_share"):
            return f"{value * 100:.0f}%"
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.1e}"
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if key == "fibres" and isinstance(value, list | tuple):  # (fibre, nm, before dB, after dB)
        return "; ".join(
            f"fibre {r[0]} at {r[1]} nm: {_evidence_value('', r[2])} -> {_evidence_value('', r[3])} dB"
            for r in value
            if isinstance(r, list | tuple) and len(r) == 4
        )
    if isinstance(value, list | tuple):
        return ", ".join(_evidence_value(key, v) for v in value)
    if isinstance(value, dict):  # per end: {"a": true, "b": false} -> "A end: yes, B end: no"
        return ", ".join(f"{word(k)}: {_evidence_value(key, v)}" for k, v in value.items())
    if isinstance(value, str):
        if key == "class":  # a link class is the operator's own name ("rail", "spine"), said as is
            return value
        if key == "role":
            return _ROLE.get(value, word(value))
        if re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", value):
            try:
                return human_when(datetime.fromisoformat(value))
            except ValueError:
                return value
        return word(value, "fec" if key == "fec" else "")
    return str(value)


def evidence_rows(evidence: object) -> list[tuple[str, str]]:
    """Alert evidence as ``(label, value)`` rows a person reads, every label from ``KEYS``.

    ``{"speed_gbps": 400, "recommendation_code": "clean", "link": {"id": 3, "pmd": "DR4"}}`` ->
    ``[("Speed", "400 Gb/s"), ("PMD", "DR4")]``: the unit in a label moves to its value, a
    nested record (the link) gives its own rows, hidden keys, ids and empty values give none.
    """
    if not isinstance(evidence, dict):
        return []
    rows: list[tuple[str, str]] = []
    for key, value in evidence.items():
        key = str(key)
        if key in EVIDENCE_HIDDEN or key.endswith("_id") or value in (None, "", [], {}):
            continue
        if isinstance(value, dict) and not set(value) <= _ENDS:
            rows += evidence_rows(value)
            continue
        text = _evidence_value(key, value)
        if not text:
            continue
        label = word(key)
        label = label[:1].upper() + label[1:]  # a one-word key no rule names ("flaps") reads "Flaps"
        unit = _UNIT.match(label)
        if unit and not isinstance(value, bool | list | tuple | dict):
            label, text = unit.group(1), f"{text} {unit.group(2)}"
        rows.append((label, text))
    return rows


def percent(value, digits: int = 1) -> str:
    """``29.7 %``: a probability or a rate (0.297) as people read it, the sign never on a line
    of its own (a no-break space); "" for none."""
    if value is None or value == "":
        return ""
    try:
        return f"{float(value) * 100:.{digits}f}\u00a0%"
    except (TypeError, ValueError):
        return ""
