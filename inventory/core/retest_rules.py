"""When is a cable due for its retest? Pure rules, no ORM: facts in, a date out.

The service (``inventory.services.retests.due``) gathers the facts for a batch of cables in a few
set-based queries and calls :func:`retest_due` for each; this module decides.

Rules (each number configurable, see ``Defaults`` and ``RetestPolicy``):

* Planned or retired cables have no due date, nor has out-of-band copper (Cat6A): no test gate
  applies to it and no test can be recorded on it (``retested``), so a date would be overdue for
  ever and remind and escalate with nothing anyone could do.
* The basis is the last *qualifying* passing (or marginal) test: OLTS or OTDR for fibre, a link
  qualification for sealed DAC/ACC/AOC. Due = basis + interval.
* Never tested since install: due ``new_install_days`` after the install date (default 0: a new
  link is due before it goes into production).
* A failed test, a fault report, a re-seat or a ``loss_increase`` finding after the basis brings
  it forward: due = min(due, trigger + ``shorten_days``).
* Where the site accepts telemetry as the retest of a live link (``accept_telemetry``), a cable
  in production with no alert open and none opened during an interval has that interval
  accepted: the due date rolls forward one interval at a time, as each one comes within the
  reminder window clean. An alert in an interval stops the roll at that interval's end: a
  physical retest is due then.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

FIBRE_KINDS = frozenset({"SMF_OS2", "MMF_OM3", "MMF_OM4", "MMF_OM5"})
SEALED_KINDS = frozenset({"DAC", "ACC", "AOC"})
NO_DUE_STATUSES = frozenset({"planned", "retired"})
# The media that are tested (the production gate's, and the retests'): fibre and sealed cables.
TESTED_KINDS = FIBRE_KINDS | SEALED_KINDS


def retested(cable_kind: str) -> bool:
    """Is this medium tested, at commissioning (the production gate) and every interval after?
    Fibre (power meter, OTDR) and sealed DAC/ACC/AOC (link qualification) are; out-of-band copper
    (Cat6A) is not: it has no test gate and no retest due date."""
    return cable_kind in TESTED_KINDS


def qualifying_test_kinds(cable_kind: str) -> frozenset[str] | None:
    """Test kinds that count as a retest of this medium (None: any kind counts)."""
    if cable_kind in FIBRE_KINDS:
        return frozenset({"olts", "otdr"})
    if cable_kind in SEALED_KINDS:
        return frozenset({"qualification"})
    return None


def retest_kind_label(cable_kind: str) -> str:
    """What the technician has to do, in words for the worklist and the mail."""
    if cable_kind in FIBRE_KINDS:
        return "OLTS/OTDR"
    if cable_kind in SEALED_KINDS:
        return "link qualification"
    return "test"


@dataclass(frozen=True)
class Defaults:
    interval_days: int = 90
    shorten_days: int = 7
    new_install_days: int = 0
    remind_days: int = 7
    accept_telemetry: bool = False


@dataclass(frozen=True)
class PolicyRule:
    """One ``RetestPolicy`` row (blank scope = any; None value = not set here)."""

    site_id: int | None = None
    kind: str = ""
    link_class: str = ""
    interval_days: int | None = None
    shorten_days: int | None = None
    accept_telemetry: bool | None = None

    @property
    def specificity(self) -> int:
        return (
            (4 if self.site_id is not None else 0) + (2 if self.kind else 0) + (1 if self.link_class else 0)
        )

    def matches(self, site_id: int | None, kind: str, link_class: str) -> bool:
        return (
            (self.site_id is None or self.site_id == site_id)
            and (not self.kind or self.kind == kind)
            and (not self.link_class or self.link_class == link_class)
        )


@dataclass(frozen=True)
class Policy:
    interval_days: int
    shorten_days: int
    accept_telemetry: bool


class PolicyResolver:
    """Resolves the policy for (site, medium, link classes), most specific value first.

    ``site_intervals`` are ``Site.retest_interval_days`` values: they act as a site-wide policy
    (below an explicit policy of the same scope). Results are cached per key: a cluster has a
    handful of distinct keys, not one per cable.
    """

    def __init__(
        self,
        rules: Iterable[PolicyRule],
        defaults: Defaults,
        site_intervals: dict[int, int] | None = None,
    ):
        synthetic = [PolicyRule(site_id=s, interval_days=d) for s, d in (site_intervals or {}).items() if d]
        # Stable sort: explicit rules before the synthetic site rule of the same specificity.
        self.rules = sorted([*rules, *synthetic], key=lambda r: -r.specificity)
        self.defaults = defaults
        self.uses_link_class = any(r.link_class for r in self.rules)
        self.uses_telemetry = defaults.accept_telemetry or any(r.accept_telemetry for r in self.rules)
        self._cache: dict[tuple, Policy] = {}

    def _one(self, site_id: int | None, kind: str, link_class: str) -> Policy:
        values: dict[str, object] = {}
        for rule in self.rules:
            if not rule.matches(site_id, kind, link_class):
                continue
            for name in ("interval_days", "shorten_days", "accept_telemetry"):
                v = getattr(rule, name)
                if v is not None and name not in values:
                    values[name] = v
        d = self.defaults
        return Policy(
            interval_days=int(values.get("interval_days", d.interval_days)),
            shorten_days=int(values.get("shorten_days", d.shorten_days)),
            accept_telemetry=bool(values.get("accept_telemetry", d.accept_telemetry)),
        )

    def resolve(self, site_id: int | None, kind: str, link_classes: Iterable[str] = ()) -> Policy:
        """A cable on several links takes the strictest of their classes' policies."""
        classes = tuple(sorted(set(link_classes))) if self.uses_link_class else ()
        key = (site_id, kind, classes)
        hit = self._cache.get(key)
        if hit is None:
            options = [self._one(site_id, kind, c) for c in classes] or [self._one(site_id, kind, "")]
            hit = Policy(
                interval_days=min(p.interval_days for p in options),
                shorten_days=min(p.shorten_days for p in options),
                accept_telemetry=all(p.accept_telemetry for p in options),
            )
            self._cache[key] = hit
        return hit


@dataclass(frozen=True)
class CableFacts:
    """What is known about one cable, gathered set-based by the service."""

    cable_id: int
    kind: str
    status: str
    install_date: date | None  # or the day the record was made
    last_pass: date | None = None
    last_pass_at: datetime | None = None  # precise, needed only to order triggers on that day
    triggers: tuple[datetime, ...] = ()  # failed tests, faults, re-seats, loss increases (any time)
    live: bool = False  # in production: telemetry can vouch for it
    alerts: tuple[datetime, ...] = ()  # when alerts opened on the cable or its links
    alert_open: bool = False


def add_days(day: date, days: int) -> date:
    """``day + days``, held at the calendar's ends (a test dated 9999-12-31 plus 90 days is
    9999-12-31, not an ``OverflowError`` that stops the sweep for every cable)."""
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return date.max if days > 0 else date.min


def retest_due(facts: CableFacts, policy: Policy, defaults: Defaults, today: date) -> date | None:
    if facts.status in NO_DUE_STATUSES or not retested(facts.kind):
        return None
    basis = facts.last_pass
    if basis is None:
        due = add_days(facts.install_date or today, defaults.new_install_days)
    else:
        interval = timedelta(days=policy.interval_days)
        due = add_days(basis, policy.interval_days)
        if policy.accept_telemetry and facts.live and not facts.alert_open and policy.interval_days > 0:
            horizon = add_days(today, defaults.remind_days)
            alerts = sorted(a.date() for a in facts.alerts)
            # Each interval is accepted on its own: clean from its start to its end.
            while due <= horizon and due < date.max and not any(due - interval <= a < due for a in alerts):
                due = add_days(due, policy.interval_days)
    if not facts.triggers:
        return due
    if basis is None:
        after = list(facts.triggers)
    elif facts.last_pass_at is not None:
        after = [t for t in facts.triggers if t > facts.last_pass_at]
    else:
        after = [t for t in facts.triggers if t.date() > basis]
    if after:
        due = min(due, add_days(min(after).date(), policy.shorten_days))
    return due
