"""The one decision about a cable: its state, what the first screen says, and the next step.

Pure: it takes the evidence (``CableEvidence``: the open alerts on every link through the cable,
its open faults, what fails on its own tests and on every segment and channel of its links, what
the production gate still lacks, the retest, the replacement) and returns a ``Decision``. The
cable page, the desk list, the API's ``next_step`` and the alert page all show this one answer;
``selectors.decision`` gathers the evidence set-based for one cable or a page of them.

The rules, in order (the first that applies sets the state and the step):

1. Retired: no step; where the replacement is.
2. An alert of warning level or above (warning, notify, critical, page) open on a link through
   the cable: the step is the alert's recommendation (open the alert). "Mark in production" is
   never offered while one is open (``alert_blocks_production``; the service refuses it too).
   A cable carrying several links (a trunk between panels) is not held by an alert on one of
   them that names another cable as its suspect (``alert_holds``): its state is its own, and
   the alert is said once in its headline (``Decision.carried``, ``ALERT_CARRIED``). An alert
   naming the trunk itself, or no cable, holds it; a cable carrying one link is held by any.
3. A fault reported and still open, with no test since: retest after the repair.
4. Something fails: each failure names the segment, the figure and the limit. The cable's own
   failure on a cable recorded as tested or in production: "Mark degraded". A failure on another
   segment of its link: go to that segment, unless the cable's own gate lacks a test or its
   retest is due: then that test (here at the rack), the failure named beside it. A cable carrying several links (a trunk between
   panels) whose own tests pass is not failed by another segment of one of them: its state is
   its own (the rules below), and the failure elsewhere is said once in its headline, naming
   that segment (``Decision.elsewhere``).
5. The gate lacks a test: record it; but a cable still recorded as planned is first marked
   installed ("Mark installed", with the day), as one whose gate no test applies to (Cat6A) is.
6. The retest is overdue: record it.
7. Every test passes and nothing is open: "Mark in production" (when not already).

Whatever the state, a link through the cable that is drained (taken out of service from an
alert, its maintenance window open) is said once, here: ``Decision.drained`` ("drained, in
maintenance until 16:30 UTC"), first among the reasons and in the state's few words. A cable
carrying several links, not all of them drained, says which: "one link it carries is drained
(gpu-0001:eth1 \u2194 leaf-01:Ethernet2/1, until 16:30 UTC)" (``carried_drain_words``).

A drain whose window ran out without a restore (``CableEvidence.drain_overdue``) is its own
state, before rule 2 (a drain is taken from an alert, which is usually still open: the drain is
the more urgent, the link is out with nobody's window on it): "Drained since 09:12, window
ended 13:12: restore it or extend", the step is the alert page where both are done, and "Mark
in production" is not offered (as far as anyone recorded, the link is still out of service).
``drain_overdue_words`` says it for the alert page and the engineers' mail too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from inventory.core.choices import SEVERITY_ORDER, AlertRule, CableStatus, Severity
from inventory.core.telemetry.rules.config import PHYSICAL_RULES

# An alert at or above this severity holds a cable out of production (info alerts do not).
BLOCKING_RANK = SEVERITY_ORDER[Severity.WARNING]
BLOCKING_SEVERITIES = frozenset(s for s, rank in SEVERITY_ORDER.items() if rank >= BLOCKING_RANK)

# The rules whose open alert says the cable it names is degraded: the physical rules, and a
# tail-latency spike that names a most likely cable (it names one only when physical evidence on
# that link points at it: FEC, receive power, flaps; with none it names no cable). PFC storms (a
# host or congestion), miswires, swaps and test results are not a degradation of the running link.
DEGRADING_RULES = frozenset(PHYSICAL_RULES | {AlertRule.TAIL_LATENCY_SPIKE.value})

# Where the page offers each step (the cable page's action keys; ``url`` is filled by the caller).
STEP_WORDS = {
    "alert": "Open the alert",
    "segment": "Open the failing segment",
    "olts": "Record the power-meter test",
    "otdr": "Record the OTDR test",
    "qualification": "Record the link qualification",
    "replace": "Replace the cable",
    "drain": "Restore or extend the drain",
    "status": "",
}

# The install date a planned cable takes when it goes in with tests already recorded
# (``services.plant.cables.install_date_for``), as its page and history say it.
FIRST_TEST_DAY = "the day of its first test"

# What a trunk whose own tests pass says of a failure on another segment of a link it carries.
ELSEWHERE = "A link it carries fails elsewhere"
# What a trunk says of an alert on a link it carries that names another cable (not its state).
ALERT_CARRIED = "An alert is open on a link it carries"

# States, worst first, and how a list or a path row says them in a few words.
STATE_WORDS = {
    "alert": "alert open",
    "drain": "drain overdue",
    "fault": "fault open",
    "fails": "tests fail",
    "untested": "needs tests",
    "retest": "retest overdue",
    "ready": "ready for production",
    "ok": "in production, tests pass",
    "retired": "retired",
    "none": "",
}
STATES = tuple(STATE_WORDS)
# The same states said of a cable no test gate applies to (Cat6A): nothing was tested.
UNGATED_STATE_WORDS = {**STATE_WORDS, "ok": "in production"}


def alert_blocks_production(severity: str) -> bool:
    """Does an open alert of this severity hold a cable out of production?"""
    return SEVERITY_ORDER.get(severity, 0) >= BLOCKING_RANK


def alert_degrades(rule: str, severity: str) -> bool:
    """Does an open alert of this rule and severity mean the cable it names is degraded?

    The one answer for every rule: the alert lifecycle moves the named cable to "degraded" when
    such an alert opens (unsilenced), so the cable's badge, the lists, the path table and the rack
    drawing say what its first screen says ("Page alert open: ... Not ready for production"); the
    impact figures count the hours "while degraded" over the same alerts (``core.impact``)."""
    return rule in DEGRADING_RULES and alert_blocks_production(severity)


@dataclass(frozen=True, slots=True)
class AlertFact:
    id: int
    severity: str
    rule: str
    rule_words: str
    summary: str
    recommendation: str
    url: str
    silenced: bool = False
    #: On watch after a repair or a replacement, waiting for the rule's clean window, in the words
    #: of ``core.repairs.watching_words`` ("cleaned at End B, watching"); "" when not watching.
    watching: str = ""
    replacement: str = ""  # what was done ("cable replacement (J-102 by R-102)")
    #: The label of the cable the alert names as its suspect (``core.alert_ends.alert_cable``),
    #: "" when it names none: another cable of the link says where the alert points.
    suspect: str = ""

    @property
    def blocks(self) -> bool:
        return alert_blocks_production(self.severity)

    @property
    def carried_words(self) -> str:
        """``Page alert open: Link flap on C000601``: the alert as a trunk it does not hold says it."""
        return f"{self.severity.capitalize()} alert open: {self.rule_words} on {self.suspect}"


def alert_holds(alert: AlertFact, *, label: str, links: int) -> bool:
    """Does this open alert hold the cable ``label``, which carries ``links`` active links, out of
    production? One of warning level or above does, unless the cable carries several links (a
    trunk between panels) and the alert names another cable as its suspect: one flapping patch
    cord says nothing of the trunk's other links. An alert naming the trunk, or no cable, holds
    it. The SQL twins (``selectors.testing.verdict_table._held_cables``) ask the same."""
    return alert.blocks and not (links >= 2 and alert.suspect and alert.suspect != label)


@dataclass(frozen=True, slots=True)
class FailFact:
    """One failure, always with where (the segment), the figure and the limit.

    ``segment``: the failing cable's label (or ``channel`` for a whole link over its PMD limit);
    ``what``: ``trunk C000226 segment`` or ``channel gpu-0001:ib0 - leaf-01:Ethernet1``;
    ``figure``/``limit``: the measured and allowed values in words (``3.10 dB``, ``2.60 dB
    TIA-568.3 budget``). ``own``: the cable's own test failed (not another segment of its link).
    """

    segment: str
    what: str
    figure: str
    limit: str
    url: str
    own: bool
    kind: str = "olts"
    note: str = ""
    #: The link the failure is on, for a failure of another segment or of a channel.
    link_id: int | None = None

    @property
    def text(self) -> str:
        text = (
            f"{self.what}: {self.figure}, over its {self.limit}"
            if self.limit
            else f"{self.what}: {self.figure}"
        )
        return f"{text} ({self.note})" if self.note else text


@dataclass(frozen=True, slots=True)
class FaultFact:
    text: str
    at: datetime
    who: str = ""


@dataclass
class CableEvidence:
    label: str
    status: str
    gated: bool  # the production gate applies (fibre or sealed); copper out-of-band is not tested
    fibre: bool
    alerts: list[AlertFact] = field(default_factory=list)
    faults: list[FaultFact] = field(default_factory=list)
    fails: list[FailFact] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    retest_due: date | None = None
    today: date | None = None
    last_test_at: datetime | None = None
    replaced_by: str = ""
    replaced_by_url: str = ""
    #: The end of the maintenance window of a drained link through the cable (the latest, if
    #: several are drained); None when none is.
    drained_until: datetime | None = None
    #: A drain of a link through the cable whose window ended without a restore: (drained at,
    #: window ended at), and the URL of its alert's page (restore or extend there).
    drain_overdue: tuple[datetime, datetime] | None = None
    drain_overdue_url: str = ""
    #: How many active links run through the cable (a trunk between panels carries several).
    links: int = 0
    #: The drained links through the cable, as ``gpu-0001:eth1 \u2194 leaf-01:Ethernet2/1``
    #: (a trunk says which of its links is drained; "" where the caller does not name them).
    drained_links: list[str] = field(default_factory=list)


def until_words(until: datetime, today: date | None) -> str:
    """When a maintenance window ends, as people read it: ``16:30`` today, ``5 Dec 16:30`` another
    day (UTC; the caller adds the zone). The decision, the drain and extend messages all say it so."""
    u = until.astimezone(UTC)
    return f"{u:%H:%M}" if today is None or u.date() == today else f"{u.day} {u:%b %H:%M}"


def drained_words(until: datetime | None, today: date | None) -> str:
    """``drained, in maintenance until 16:30 UTC`` (``... until 5 Dec 16:30 UTC`` another day)."""
    if until is None:
        return ""
    return f"drained, in maintenance until {until_words(until, today)} UTC"


def carried_drain_words(until: datetime | None, today: date | None, names: list[str], links: int) -> str:
    """What a cable carrying several links says of a drain: ``one link it carries is drained
    (gpu-0001:eth1 \u2194 leaf-01:Ethernet2/1, until 16:30 UTC)``; ``drained_words`` when every
    link it carries is drained, or it carries one."""
    if until is None or links < 2 or not names or len(names) >= links:
        return drained_words(until, today)
    which = "; ".join(names[:2]) + ("; \u2026" if len(names) > 2 else "")
    one = "one link it carries is" if len(names) == 1 else f"{len(names)} of the {links} links it carries are"
    return f"{one} drained ({which}, until {until_words(until, today)} UTC)"


def _at(t: datetime, today: date | None) -> str:
    u = t.astimezone(UTC)
    return f"{u:%H:%M}" if today is None or u.date() == today else f"{u.day} {u:%b %H:%M}"


def drain_overdue_words(drained_at: datetime, ended_at: datetime, today: date | None) -> str:
    """``drained since 09:12, window ended 13:12: restore it or extend`` (UTC; with the day when
    not ``today``)."""
    return (
        f"drained since {_at(drained_at, today)}, window ended {_at(ended_at, today)} UTC: "
        "restore it or extend"
    )


@dataclass(frozen=True, slots=True)
class Step:
    key: str  # alert, drain, segment, olts, otdr, qualification, replace, status
    label: str
    reason: str
    url: str = ""
    status: str = ""  # for key "status": the status it sets

    @property
    def opens_a_page(self) -> bool:
        """Whether a row may link the step: its URL is a page. A status step's is the cable
        page's button (a POST, with the install date), never a link: the row's label opens it."""
        return bool(self.url) and self.key != "status"


@dataclass
class Decision:
    state: str
    tone: str  # bad, warn, ok, none
    headline: str
    reasons: list[str]
    step: Step | None
    fails: list[FailFact]
    blocking: list[AlertFact]
    offers_production: bool
    #: Every open alert that names the cable (as suspect, on its path or on a link through it),
    #: blocking or not: the desk list's "alert" flag reads this, not a query of its own.
    alerts: list[AlertFact] = field(default_factory=list)
    #: "drained, in maintenance until 16:30 UTC" while a link through the cable is drained.
    drained: str = ""
    #: "drained since 09:12, window ended 13:12 UTC: restore it or extend" (``drain_overdue_words``).
    drain_overdue: str = ""
    #: The open fault the headline names (state "fault"): the page says its text there, once.
    fault: FaultFact | None = None
    #: No test gate applies (Cat6A): "ready" then means nothing holds it, not "tests pass".
    no_gate: bool = False
    #: A cable carrying several links whose own tests pass: the failures of other segments of
    #: those links (the headline says them once, after the cable's own state; not its state).
    elsewhere: list[FailFact] = field(default_factory=list)
    #: With ``elsewhere`` or ``carried``: the headline's first part, the cable's own state ("In
    #: production: its own tests pass."); the headline adds ``ELSEWHERE`` and the failures, then
    #: ``ALERT_CARRIED`` and the alert.
    lead: str = ""
    #: A cable carrying several links: the open alerts of warning level or above on one of them
    #: that name another cable, which do not hold it (``alert_holds``); its headline says them.
    carried: list[AlertFact] = field(default_factory=list)

    @property
    def words(self) -> str:
        extra = self.drained if self.state != "drain" else ""
        state = (UNGATED_STATE_WORDS if self.no_gate else STATE_WORDS).get(self.state, "")
        return "; ".join(w for w in (state, extra) if w)

    @property
    def alert_words(self) -> str:
        """``2 alerts open`` beside a state that does not already say so ("retest overdue"):
        a row never hides an open alert behind another state."""
        n = len(self.alerts) - len(self.carried)
        if n <= 0 or self.state == "alert":
            return ""
        return f"{n} alert{'s' if n != 1 else ''} open"

    @property
    def carried_words(self) -> str:
        """``alert on a link, at C000601`` beside the state of a trunk an alert on one of its
        links does not hold."""
        if not self.carried:
            return ""
        names = list(dict.fromkeys(a.suspect for a in self.carried))
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        return f"alert on a link, at {names[0]}{more}"

    @property
    def carried_text(self) -> str:
        """The carried alert as the headline names it: ``Page alert open: Link flap on C000601``."""
        return "; ".join(a.carried_words for a in self.carried[:3]) + (
            "; \u2026" if len(self.carried) > 3 else ""
        )

    @property
    def elsewhere_words(self) -> str:
        """``a link fails at C000343`` beside the state of a trunk whose own tests pass."""
        names = list(dict.fromkeys(f.segment for f in self.elsewhere))
        if not names:
            return ""
        more = f" and {len(names) - 1} more" if len(names) > 1 else ""
        return f"a link fails at {names[0]}{more}"

    @property
    def headline_lead(self) -> str:
        """The headline without what fails elsewhere (the cable page lists that with links)."""
        return self.lead or self.headline

    @property
    def state_line(self) -> str:
        """The state as a row says it: ``retest overdue, 1 alert open``."""
        return ", ".join(
            w for w in (self.words, self.alert_words, self.elsewhere_words, self.carried_words) if w
        )

    @property
    def line(self) -> str:
        """The decision in one plain line, as a row's cell says it on a page (``{% decision_cell %}``):
        for what cannot carry the cell (CSV, PDF, mail). ``retest overdue, 1 alert open · Record
        the power-meter test``."""
        return " · ".join(w for w in (self.state_line, self.step.label if self.step else "") if w)

    def as_dict(self) -> dict:
        return {
            "state": self.state,
            "headline": self.headline,
            "reasons": self.reasons,
            "step": None
            if self.step is None
            else {
                "key": self.step.key,
                "label": self.step.label,
                "reason": self.step.reason,
                "url": self.step.url or None,
                "status": self.step.status or None,
            },
            "fails": [
                {
                    "segment": f.segment,
                    "text": f.text,
                    "figure": f.figure,
                    "limit": f.limit,
                    "url": f.url,
                    "own": f.own,
                }
                for f in self.fails
            ],
            "blocking_alerts": [a.id for a in self.blocking],
            "drained": self.drained or None,
            "drain_overdue": self.drain_overdue or None,
        }


def _status_words(status: str) -> str:
    return status.replace("_", " ")


def _worst(alerts: list[AlertFact]) -> AlertFact:
    return max(alerts, key=lambda a: (SEVERITY_ORDER.get(a.severity, 0), a.id))


def _install_step(*, tested: bool = True) -> Step:
    """A planned cable's step once it is pulled and plugged in: recorded as installed, on the day
    (``tested``: then tested; a cable no test gate applies to is not)."""
    then = "; then test it" if tested else ""
    return Step(
        "status",
        "Mark installed",
        f"Recorded as planned: once it is pulled and plugged in, mark it installed{then}.",
        status=CableStatus.INSTALLED,
    )


def _test_step(ev: CableEvidence, why: str) -> Step | None:
    """The test the gate lacks (or the retest), as a step."""
    text = " ".join(ev.missing).lower()
    if ev.fibre:
        key = "otdr" if ("otdr" in text and "power-meter" not in text) else "olts"
    else:
        key = "qualification"
    return Step(key, STEP_WORDS[key], why)


@dataclass(frozen=True, slots=True)
class Hold:
    """What holds a cable out of production whatever its tests say (rules 1-3 and the overdue
    drain): ``state`` (retired, drain, alert, fault), ``reason`` (what holds it: the commissioning
    report's rows, whose column already says it blocks) and ``advice`` (what the cable page's
    first screen adds for a technician); ``headline`` is the two together."""

    state: str
    reason: str
    alert: AlertFact | None = None  # the worst blocking alert, for state "alert"
    fault: FaultFact | None = None  # the first open fault, for state "fault"
    advice: str = ""

    @property
    def headline(self) -> str:
        return f"{self.reason}. {self.advice}" if self.advice else self.reason


def fault_settled(reported_at: datetime, last_test_at: datetime | None) -> bool:
    """Is a fault reported at ``reported_at`` settled? By a test of the cable at or after the
    report (the repair's proof), and by nothing else: closing the journal entry does not settle
    it (``services.plant.fieldwork.journal_close`` refuses to), so a faulty cable never goes
    back into production on tests from before its fault."""
    return last_test_at is not None and last_test_at >= reported_at


def unsettled_faults(ev: CableEvidence) -> list[FaultFact]:
    """The faults reported with no test of the cable since (a test after the report settles it)."""
    return [f for f in ev.faults if not fault_settled(f.at, ev.last_test_at)]


# An alert holds a cable recorded as in production whose own test fails too: the headline's
# advice, and the step it names ("Mark degraded").
OWN_FAILS_TOO = "Its own test fails too (below): mark it degraded until it is fixed."


def production_hold(ev: CableEvidence) -> Hold | None:
    """What holds the cable out of production beyond its tests, or None: retired, a drain whose
    window ran out, an open alert of warning level or above, an open fault. ``cable_decide`` takes
    its first rules from here, and the commissioning report asks it of every cable of a link (a
    link whose tests pass is ready only when none of its cables is held); its SQL twin, for the
    report's counts, is in ``selectors.testing.verdict_table``, held to the same answer by
    ``tests/inventory/selectors/testing/test_verdict_table.py``."""
    if ev.status == CableStatus.RETIRED:
        return Hold("retired", f"Retired, replaced by {ev.replaced_by}." if ev.replaced_by else "Retired.")
    if ev.drain_overdue:
        late = drain_overdue_words(*ev.drain_overdue, ev.today)
        return Hold("drain", f"{late[0].upper()}{late[1:]}.")
    blocking = [a for a in ev.alerts if alert_holds(a, label=ev.label, links=ev.links)]
    if blocking:
        a = _worst(blocking)
        watching = f" ({a.watching})" if a.watching else ""
        # A cable the alert did not degrade (a PFC storm, a miswire, a silenced alert) stays in
        # production: its headline must not contradict the "In production" badge above it.
        # ... unless its own test fails: then the Tests card below says it is not ready, and
        # so must the headline.
        if ev.status != CableStatus.IN_PRODUCTION:
            advice = "Not ready for production until it resolves."
        elif any(f.own for f in ev.fails):
            advice = OWN_FAILS_TOO
        else:
            advice = "It stays in production; the alert says what to check."
        # On a cable the alert only passes through (a trunk, the link's other patch cord), the
        # reason names the cable it points at, so a technician is not left to guess which.
        on = f" on {a.suspect}" if a.suspect and a.suspect != ev.label else ""
        reason = f"{a.severity.capitalize()} alert open: {a.rule_words}{on}{watching}"
        return Hold("alert", reason, alert=a, advice=advice)
    faults = unsettled_faults(ev)
    if faults:
        return Hold("fault", f"Fault reported: {faults[0].text}", fault=faults[0])
    return None


def cable_decide(ev: CableEvidence) -> Decision:
    """The state, the first screen's headline, its reasons and the one next step."""
    d = _decide(ev)
    if d.elsewhere or d.carried:
        d.lead = d.headline
    if d.elsewhere:
        listed = "; ".join(f.text for f in d.elsewhere[:3]) + ("; …" if len(d.elsewhere) > 3 else "")
        d.headline = f"{d.headline} {ELSEWHERE}: {listed}."
    if d.carried:
        d.headline = f"{d.headline} {ALERT_CARRIED}: {d.carried_text}.".lstrip()
    return d


def failures_elsewhere(ev: CableEvidence) -> list[FailFact]:
    """The failures that are not the cable's state (rule 4): those of other segments of the links
    through a cable that carries several (a trunk between panels) and whose own tests pass. One
    failing patch cord among the 24 on a trunk's panels says nothing of the trunk or of its other
    links. A cable carrying one link shares that link's failure, wherever it is."""
    if ev.links < 2 or any(f.own for f in ev.fails):
        return []
    return list(ev.fails)


def _decide(ev: CableEvidence) -> Decision:
    hold = production_hold(ev)
    if hold is not None and hold.state == "retired":
        return Decision("retired", "none", hold.headline, [], None, [], [], False)
    blocking = [a for a in ev.alerts if alert_holds(a, label=ev.label, links=ev.links)]
    carried = [a for a in ev.alerts if a.blocks and a not in blocking]
    drained = carried_drain_words(ev.drained_until, ev.today, ev.drained_links, ev.links)
    late = drain_overdue_words(*ev.drain_overdue, ev.today) if ev.drain_overdue else ""
    reasons: list[str] = [w for w in (late, drained) if w]
    for a in sorted(ev.alerts, key=lambda a: -SEVERITY_ORDER.get(a.severity, 0)):
        state = f" ({a.watching})" if a.watching else ""
        reasons.append(f"{a.severity} alert: {a.rule_words}{state}: {a.summary}")
    reasons.extend(f"fault reported: {f.text}" for f in ev.faults)
    reasons.extend(f"fails: {f.text}" for f in ev.fails)
    reasons.extend(f"needs {m}" for m in ev.missing)
    overdue = bool(ev.retest_due and ev.today and ev.retest_due < ev.today)
    if overdue:
        reasons.append(f"retest overdue since {ev.retest_due:%-d %b %Y}")
    fails = list(ev.fails)
    elsewhere = failures_elsewhere(ev)
    passes = "its own tests pass" if elsewhere else "every test passes"
    clear = "no alert holds it" if carried else "no alert is open"

    def decision(state, tone, head, step, offers=False):
        named = Decision(
            state, tone, head, reasons, step, fails, blocking, offers, list(ev.alerts), drained, late
        )
        if state not in ("alert", "drain", "fault"):
            named.elsewhere = elsewhere
        if state not in ("alert", "drain"):
            named.carried = carried
        return named

    if hold is not None and hold.state == "drain":
        why = "The drain's maintenance window ended but nobody put the link back: restore it or extend the drain."
        return decision(
            "drain", "warn", hold.headline, Step("drain", STEP_WORDS["drain"], why, ev.drain_overdue_url)
        )
    if hold is not None and hold.alert is not None:
        a = hold.alert
        why = a.recommendation or a.summary
        step = Step("alert", STEP_WORDS["alert"], why, a.url)
        if hold.advice == OWN_FAILS_TOO:
            # The headline says to mark it degraded: that is the step (the alert's advice beside
            # it, the alert one tap below), as when its own test fails with no alert open.
            step = Step("status", "Mark degraded", why, status=CableStatus.DEGRADED)
        return decision("alert", "bad", hold.headline, step)
    if hold is not None and hold.fault is not None:
        if ev.gated:
            step = _test_step(ev, "Retest after the repair: a passing test settles the fault.")
        else:
            step = Step("replace", STEP_WORDS["replace"], "Replace it, or record the repair in the journal.")
        named = decision("fault", "bad", hold.headline, step)
        named.fault = hold.fault
        return named
    if fails and not elsewhere:
        own = [f for f in fails if f.own]
        first = (own or fails)[0]
        head = "Tests fail: " + "; ".join(f.text for f in fails[:3]) + ("; …" if len(fails) > 3 else "")
        if own and ev.status in (CableStatus.IN_PRODUCTION, CableStatus.TESTED):
            step = Step(
                "status",
                "Mark degraded",
                f"Recorded as {_status_words(ev.status)}, but it fails (above): degraded until it is fixed.",
                status=CableStatus.DEGRADED,
            )
        elif own:
            key = "olts" if ev.fibre else "qualification"
            step = Step(key, STEP_WORDS[key], "Clean both ends, re-seat and retest (the failure is above).")
        else:
            # Its own gate may lack a test (or its retest be due): then that test is its step,
            # here at the rack, and the failure elsewhere is named beside it, never "its own
            # tests pass".
            due = ev.gated and (ev.missing or overdue)
            step = due and _test_step(
                ev, f"Its own test is due too; the failure above is on {first.segment}."
            )
            if not step:
                why = f"Its own tests pass: the failure above is on {first.segment}."
                step = Step("segment", f"Open {first.segment}", why, first.url)
        return decision("fails", "bad", head, step)
    if ev.gated and ev.missing:
        head = "Not ready for production: needs " + "; ".join(ev.missing) + "."
        if ev.status == CableStatus.IN_PRODUCTION:
            head = "Recorded as in production, but it still needs " + "; ".join(ev.missing) + "."
        if ev.status == CableStatus.PLANNED:
            return decision("untested", "warn", head, _install_step())
        return decision("untested", "warn", head, _test_step(ev, "The production gate needs it."))
    if overdue and ev.gated:
        head = f"Retest overdue since {ev.retest_due:%-d %b %Y}."
        return decision("retest", "warn", head, _test_step(ev, "The retest interval has passed."))
    # Planned too: a cable whose tests pass is in place, whatever the record says (the headline
    # was empty, and the Tests card read "not ready for production: " with no reason).
    if ev.gated and ev.status != CableStatus.IN_PRODUCTION:
        head = f"Recorded as {_status_words(ev.status)}, but {passes} and {clear}: ready for production."
        went_in = (
            f" Recorded as planned: it goes in as installed on {FIRST_TEST_DAY}."
            if ev.status == CableStatus.PLANNED
            else ""
        )
        step = Step(
            "status",
            "Mark in production",
            f"{passes[0].upper()}{passes[1:]} and {clear}.{went_in}",
            status=CableStatus.IN_PRODUCTION,
        )
        return decision("ready", "ok", head, step, offers=True)
    if ev.gated and ev.status == CableStatus.IN_PRODUCTION:
        return decision("ok", "ok", f"In production: {passes}." + _info_alerts(ev), None)
    if not ev.gated:
        return _ungated(ev, decision)
    return decision("none", "none", "", None)


def _info_alerts(ev: CableEvidence) -> str:
    """The open alerts of a cable in production that nothing holds (info level, then; those of
    warning level or above on a link it carries, naming another cable, are ``Decision.carried``)."""
    info = [a for a in ev.alerts if not a.blocks]
    return f" {len(info)} info alert(s) open." if info else ""


def _ungated(ev: CableEvidence, decision) -> Decision:
    """Out-of-band copper (Cat6A), which no test gate applies to, once nothing holds it and no
    test fails: planned, it is marked installed first; installed or tested, it is ready for
    production; in production, it is fine. A cable someone marked degraded or faulty has no test
    to prove it mended: it is replaced, or its repair recorded."""
    gate = "Cat6A copper has no test gate"
    if ev.status == CableStatus.PLANNED:
        head = f"Recorded as planned; {gate}: mark it installed once it is plugged in."
        named = decision("none", "none", head, _install_step(tested=False))
    elif ev.status in (CableStatus.INSTALLED, CableStatus.TESTED):
        head = f"Recorded as {_status_words(ev.status)}; {gate}: ready for production."
        why = f"{gate}, and no alert is open."
        named = decision(
            "ready",
            "ok",
            head,
            Step("status", "Mark in production", why, status=CableStatus.IN_PRODUCTION),
            True,
        )
    elif ev.status == CableStatus.IN_PRODUCTION:
        named = decision("ok", "ok", f"In production; {gate}." + _info_alerts(ev), None)
    elif ev.status in (CableStatus.DEGRADED, CableStatus.FAULTY):
        head = f"Recorded as {_status_words(ev.status)}; {gate} to prove it mended."
        named = decision(
            "none",
            "warn",
            head,
            Step("replace", STEP_WORDS["replace"], "Replace it, or record the repair in the journal."),
        )
    else:
        named = decision("none", "none", "", None)
    named.no_gate = True
    return named
