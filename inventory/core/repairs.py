"""Repairs that learn: the symptoms an alert shows, the outcome of a repair, and the ranked actions.

Pure: no ORM. ``selectors.alerts.repairs`` gathers the facts set-based; the alert page, the API,
the judging task and the alert's stored recommendation all read these functions, so a verdict
("fixed", "came back") and a ranking are decided in one place.

* ``symptom_key``: what the alert shows, as a compact key (``one``, ``both``, then ``+rx``,
  ``+bias``, ``+temp``) and the link end whose receiver sees it. The key leaves the end out: a
  link's A and B are arbitrary, and counting "A" and "B" apart would halve the data.
* ``repair_outcome``: pending, fixed (the alert resolved after the repair and stayed clean for
  the hold time) or came back (the condition showed again past the rule's clean window, the alert
  reopened, the same rule fired again on the same link, or another repair had to follow).
* ``rank_actions``: first-time-fix rate per action, ``(fixed + prior x k) / (judged + k)``: the
  prior counts as ``PRIOR_WEIGHT`` repairs, so a few outcomes move it and many outweigh it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from inventory.core.choices import FieldNoteKind, RepairAction, RepairEnd, RepairOutcome
from inventory.core.words import alerts_named

ACTIONS: tuple[str, ...] = tuple(RepairAction.values)

# The prior first-time-fix rate of each action, per the rule's own advice (the advice code the
# rule engine writes, which already reads the rule and the direction: see docs, "Repairs").
# The top of each row is the first step the rule's recommendation names, so with no outcomes
# recorded the recommendation reads exactly as the rule wrote it.
PRIOR: dict[str, dict[str, float]] = {
    # FEC or receive power at one end's receiver (the other direction clean): that end's
    # connector first, then the far end's transmitting module.
    "one_direction": {
        "clean": 0.50,
        "swap_module": 0.45,
        "reseat": 0.40,
        "replace_cable": 0.25,
        "other": 0.10,
    },
    # Both directions: the shared path; clean every connector, then replace the cable.
    "both_directions": {
        "clean": 0.45,
        "replace_cable": 0.40,
        "reseat": 0.35,
        "swap_module": 0.25,
        "other": 0.10,
    },
    # One port, no far end recorded.
    "port": {"clean": 0.50, "reseat": 0.40, "swap_module": 0.35, "replace_cable": 0.25, "other": 0.10},
    # Flaps, a lane down, a sealed DAC/ACC/AOC: re-seat first.
    "reseat": {"reseat": 0.50, "clean": 0.40, "swap_module": 0.35, "replace_cable": 0.30, "other": 0.10},
    # A slow collective whose suspect cable shows FEC errors (``tail_latency_spike``): the rule
    # says clean and re-seat both ends first, then replace the cable or the module.
    "clean_reseat": {
        "clean": 0.45,
        "reseat": 0.40,
        "replace_cable": 0.35,
        "swap_module": 0.30,
        "other": 0.10,
    },
    # PFC storms: the sending host, not the plant.
    "host": {"other": 0.50, "reseat": 0.10, "swap_module": 0.10, "clean": 0.05, "replace_cable": 0.05},
    # Miswires, unrecorded swaps and anything else: the record or the wiring, not a repair.
    "default": {"other": 0.50, "reseat": 0.20, "clean": 0.15, "swap_module": 0.15, "replace_cable": 0.15},
}
# The rule's advice code -> its prior row.
ADVICE_ROW = {
    "replace_module": "one_direction",
    "swap_module": "one_direction",
    "replace_cable": "both_directions",
    "clean": "port",
    "reseat": "reseat",
    "check_host": "host",
    "clean_reseat": "clean_reseat",
}
# A transmitter whose bias or temperature runs high points at the module (DESIGN, "Repairs learn").
MODULE_SYMPTOM_BONUS = 0.15
# The prior counts as this many repairs; a scope needs this many judged repairs to be used alone.
PRIOR_WEIGHT = 4.0
MIN_SCOPE_REPAIRS = 5


# How the alert says what was done ("Back after the cleaning at End A of J-100"), and the state
# in a few words while it watches ("cleaned at End A of J-100, watching"). One place: the cable page (the decision),
# the home and rack lists, the alert page and the API all say it with these two functions.
_DONE = {
    "clean": "cleaning",
    "reseat": "re-seat",
    "swap_module": "module swap",
    "replace_cable": "cable replacement",
    "other": "repair",
}
_DONE_PAST = {
    "clean": "cleaned",
    "reseat": "re-seated",
    "swap_module": "module swapped",
    "replace_cable": "replaced",
    "other": "repaired",
}


def end_words(end: str, cable: str = "") -> str:
    """Where a repair was done, as the alert page names the place: ``End A of J-100`` (the cable
    whose end it is: on a link through a panel, the two ends are two cables'), ``Both ends``
    (``Both ends of J-102``), ``No particular end`` (none said)."""
    of = f" of {cable}" if cable else ""
    return {"A": f"End A{of}", "B": f"End B{of}", "both": f"Both ends{of}"}.get(end, RepairEnd.NA.label)


def _where(action: str, end: str, cable: str = "") -> str:
    if action == "replace_cable" or end not in ("A", "B", "both"):
        return ""  # a cable is replaced whole
    words = end_words(end, cable)
    return f" at {words[0].lower()}{words[1:]}" if end == "both" else f" at {words}"


def repair_words(action: str, end: str, detail: str = "", cable: str = "") -> str:
    """``cleaning at End A of J-100``, ``module swap at End B of J-101 (gpu-0001 OSFP1: s/n X by
    Y)``, ``cable replacement (J-102 by R-102)``: what the alert page says it watches after."""
    what = f"{_DONE.get(action, 'repair')}{_where(action, end, cable)}"
    return f"{what} ({detail})" if detail else what


def watching_words(action: str, end: str, cable: str = "") -> str:
    """The state of an alert on watch, in a few words: ``cleaned at End B of J-101, watching``,
    ``replaced, watching`` (an action not recorded: ``repaired, watching``)."""
    return f"{_DONE_PAST.get(action, 'repaired')}{_where(action, end, cable)}, watching"


# A repair in its cable's journal: a re-seat or a cleaning is the journal entry the cable page's
# "Re-seated / cleaned" form writes (so it brings the retest forward alike); other work is a
# service action. And that form's choices as the repair they are on an alert: a connector is
# cleaned by unplugging it, so "cleaned and re-seated" is a cleaning.
JOURNAL_KIND = {RepairAction.RESEAT: FieldNoteKind.RESEATED, RepairAction.CLEAN: FieldNoteKind.CLEANED}
SERVICE_ACTION = {
    FieldNoteKind.RESEATED: RepairAction.RESEAT,
    FieldNoteKind.CLEANED: RepairAction.CLEAN,
    FieldNoteKind.RESEATED_CLEANED: RepairAction.CLEAN,
}


def journal_kind(action: str) -> str:
    """The journal entry kind of a repair (``JOURNAL_KIND``; a service action otherwise)."""
    return JOURNAL_KIND.get(action, FieldNoteKind.SERVICE)


def journal_words(
    *, action: str, end: str, cable: str, alert_id: int | list[int], note: str = "", done: str = ""
) -> str:
    """A repair as the journal of its cable says it: ``re-seated at End A of C000601 for alert
    #9: latch was loose``. ``done``: the words of what was done when the action's own are too
    few (the cable page's "re-seated and cleaned"). The alert page, the API and the cable page's
    form write it so; one cleaning recorded on several alerts is one entry ("for alerts #9 and
    #12")."""
    ids = alert_id if isinstance(alert_id, list) else [alert_id]
    what = f"{done or _DONE_PAST.get(action, 'repaired')}{_where(action, end, cable)} for {alerts_named(ids)}"
    note = (note or "").strip()
    return f"{what}: {note}" if note else what


def prior_row(*, advice_code: str, evidence: dict) -> str:
    """Which prior row an alert's advice selects (a sealed cable alone on the path: re-seat)."""
    row = ADVICE_ROW.get(advice_code or "", "default")
    modules = (evidence or {}).get("modules") or {}
    sealed = any(isinstance(m, dict) and m.get("cable") for m in modules.values())
    if sealed and row in ("one_direction", "both_directions", "port"):
        return "reseat"
    return row


def _flag(flags: dict | None, quantity: str, *levels: str) -> bool:
    return any((flags or {}).get(f"{quantity}_{lvl}") is True for lvl in levels)


_SYMPTOM_WORDS = {
    "one": "one direction",
    "both": "both directions",
    "rx": "low receive power",
    "bias": "high transmitter bias",
    "temp": "high temperature",
}


def symptom_words(key: str) -> str:
    """The compact key in words, for pages: ``one+rx`` -> "one direction, low receive power"."""
    return ", ".join(_SYMPTOM_WORDS.get(part, part) for part in key.split("+") if part)


def symptom_key(*, evidence: dict, rule: str, flags: list[dict | None]) -> tuple[str, str]:
    """(key, end): ``one``/``both`` directions, then ``+rx`` (receive power low: the rule's own
    evidence or the module's low-power flag), ``+bias`` (the module's high bias flag), ``+temp``
    (its high temperature flag); ``end`` is the link end ("a"/"b") whose receiver saw it, "" when
    both or unknown. ``flags``: the module flags (``PortTelemetryState.module_flags``) of the
    alert's ports, as the module itself last judged its readings."""
    ends = {k: v for k, v in ((evidence or {}).get("ends") or {}).items() if isinstance(v, dict)}
    sides = [s for s in ("a", "b") if s in ends]
    both = len(sides) == 2
    key = "both" if both else "one"
    end = sides[0] if len(sides) == 1 else ""
    rx = rule == "rx_power_drift" or any(e.get("below_module_warning") for e in ends.values())
    rx = rx or any(_flag(f, "rx_power", "low_warn", "low_alarm") for f in flags)
    if rx:
        key += "+rx"
    if any(_flag(f, "bias", "high_warn", "high_alarm") for f in flags):
        key += "+bias"
    if any(_flag(f, "temperature", "high_warn", "high_alarm") for f in flags):
        key += "+temp"
    return key, end


# --- outcome -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    verdict: str  # RepairOutcome
    at: datetime | None  # when it became known (None while pending)
    reason: str

    @property
    def words(self) -> str:
        return RepairOutcome(self.verdict).label


@dataclass(frozen=True, slots=True)
class AlertAfter:
    """What the alert did after the repair: its row now, and the other signs of the same key."""

    state: str  # "open" or "resolved"
    resolved_at: datetime | None
    returned_at: datetime | None  # the condition showed again past the clean window (watching)
    updated_at: datetime  # last sighting while open
    reopened: tuple[datetime, ...] = ()  # times the row reopened
    opened_again_at: datetime | None = None  # another alert of the same key opened after the repair
    next_repair_at: datetime | None = None  # another repair on this alert after this one


def repair_outcome(
    *, done_at: datetime, window_s: float, hold_s: float, now: datetime, after: AlertAfter
) -> Outcome:
    """The one verdict of a repair: pending, fixed or came back.

    * Came back: the condition showed again (``returned_at``: a finding past the rule's clean
      window after the repair), the alert reopened, the same rule opened again on the same link,
      or another repair followed, before the repair was judged fixed; or the alert is still open
      and its condition still seen ``hold_s`` after the clean window.
    * Fixed: the alert resolved after the repair (the rule's clean window held, with its ports
      reporting: absence of data is not health) and nothing came back for ``hold_s`` since.
    * Pending otherwise.
    """
    window = timedelta(seconds=window_s)
    hold = timedelta(seconds=hold_s)
    fixed_at = (
        after.resolved_at + hold
        if after.state == "resolved" and after.resolved_at is not None and after.resolved_at >= done_at
        else None
    )
    signs = [
        (t, why)
        for t, why in (
            (after.returned_at, "the condition showed again after the clean window"),
            *((t, "the alert reopened") for t in after.reopened),
            (after.opened_again_at, "the same rule fired again on the link"),
            (after.next_repair_at, "another repair followed"),
        )
        if t is not None and t > done_at and t <= now
    ]
    if signs:
        t, why = min(signs, key=lambda s: s[0])
        if fixed_at is None or t <= fixed_at:
            return Outcome(RepairOutcome.CAME_BACK, t, why)
    if fixed_at is not None:
        if now >= fixed_at:
            return Outcome(
                RepairOutcome.FIXED, fixed_at, f"clean for {hold_s / 3600:g} h after the alert resolved"
            )
        return Outcome(RepairOutcome.PENDING, None, "resolved; watching for the hold time")
    still = done_at + window + hold
    if after.state == "open" and now >= still and after.updated_at > done_at + window:
        return Outcome(
            RepairOutcome.CAME_BACK, still, "still showing after the clean window and the hold time"
        )
    return Outcome(RepairOutcome.PENDING, None, "waiting for the rule's clean window")


# --- ranking -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankedAction:
    action: str
    rate: float  # first-time-fix rate, prior included
    prior: float
    fixed: int  # judged repairs of this action in the scope used
    judged: int

    @property
    def label(self) -> str:
        return RepairAction(self.action).label

    def as_dict(self) -> dict:
        return {
            "action": self.action,
            "label": self.label,
            "rate": round(self.rate, 3),
            "prior": self.prior,
            "fixed": self.fixed,
            "repairs": self.judged,
        }


@dataclass(frozen=True, slots=True)
class Ranking:
    actions: list[RankedAction]
    scope: str  # in words: which repairs the rates rest on
    prior_top: str  # the rule's own first step (the top of its prior row, before symptoms)

    @property
    def top(self) -> RankedAction:
        return self.actions[0]

    @property
    def moved(self) -> bool:
        """Have recorded outcomes put another action first than the rule's own advice?"""
        return self.top.action != self.prior_top

    def as_dict(self) -> dict:
        return {"scope": self.scope, "actions": [a.as_dict() for a in self.actions], "moved": self.moved}


def prior_for(*, row: str, symptoms: str) -> dict[str, float]:
    prior = dict(PRIOR.get(row, PRIOR["default"]))
    if "+bias" in symptoms or "+temp" in symptoms:
        prior["swap_module"] = min(0.95, prior["swap_module"] + MODULE_SYMPTOM_BONUS)
    return prior


def rule_first(row: str) -> str:
    """The first step of the rule's own advice: the top of its prior row, before any symptom."""
    base = PRIOR.get(row, PRIOR["default"])
    return max(ACTIONS, key=lambda a: base.get(a, 0.0))


def rank_actions(
    *, prior: dict[str, float], counts: dict[str, tuple[int, int]], scope: str, first: str
) -> Ranking:
    """Actions by first-time-fix rate, ``(fixed + prior x k) / (judged + k)``; ties keep the
    prior's order. ``counts``: action -> (fixed, judged) in the scope chosen; ``first``: the
    rule's own first step (``rule_first``)."""
    order = sorted(ACTIONS, key=lambda a: -prior.get(a, 0.0))
    ranked = []
    for a in order:
        fixed, judged = counts.get(a, (0, 0))
        p = prior.get(a, 0.0)
        ranked.append(RankedAction(a, (fixed + p * PRIOR_WEIGHT) / (judged + PRIOR_WEIGHT), p, fixed, judged))
    ranked.sort(key=lambda r: -r.rate)  # stable: ties keep the prior's order
    return Ranking(ranked, scope, first)


def recommendation_words(*, advice: str, ranking: Ranking) -> str:
    """The alert's recommendation: the rule's own words while its first step ranks first; else
    the measured best action first, then the rule's words."""
    if not ranking.moved:
        return advice
    top = ranking.top
    if top.judged:
        why = f"it fixed {top.fixed} of {top.judged} repairs like this ({top.rate:.0%} first-time fix, {ranking.scope})"
    else:
        why = f"{top.rate:.0%} expected first-time fix ({ranking.scope}; none of this kind judged yet)"
    return f"{top.label} first: {why}. The rule's advice: {advice}"[:500]
