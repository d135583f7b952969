"""The production gate: what each cable still needs (tests, their verdicts and age) before it
may go into production. A read: the cable status change and the pages ask it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.utils import timezone

from inventory.core.choices import CableKind, TestKind, Verdict
from inventory.core.retest_rules import retested
from inventory.core.words import human_date
from inventory.models import Cable, CableEnd
from inventory.selectors.testing.facts import fibres_in_use, otdr_min_length_m, retest_interval
from inventory.selectors.testing.latest import PASSING, latest_tests

# Built once: ``CableKind.fibre()`` builds a new set per call, and the gate asks per cable.
FIBRE_KINDS = frozenset(CableKind.fibre())
SEALED_KINDS = frozenset(CableKind.sealed())


def _fibres(n: int) -> str:
    """``all 8 fibres``; ``its fibre`` (never "all 1 fibres")."""
    return f"all {n} fibres" if n != 1 else "its fibre"


def cable_gated(cable: Cable) -> bool:
    """Does the production gate test this cable? Fibre (power meter, OTDR) and sealed cables
    (link qualification) yes; out-of-band copper (Cat6A) has no test, and no retest either."""
    return retested(cable.kind)


def cables_gate(*, cables: Sequence[Cable], now: datetime | None = None) -> dict[int, list[str]]:
    """What each cable still needs before it may go into production (empty list: nothing).

    Set-based: one query for the latest tests of every cable, one for their ends.
    Fibre: a passing power-meter test on every fibre in use and, unless the cable is shorter
    than the OTDR dead-zone limit, a passing OTDR, both newer than the retest interval.
    Sealed DAC/ACC/AOC: a passing link qualification. Cat6A: nothing optical.
    """
    now = now or timezone.now()
    ids = [c.pk for c in cables]
    latest = latest_tests(cable_ids=ids)
    ends: dict[int, list[CableEnd]] = {}
    for e in CableEnd.objects.filter(cable_id__any=ids).only(
        "cable_id", "connector_type", "fibre_count", "polish"
    ):
        ends.setdefault(e.cable_id, []).append(e)
    return gate_missing(cables=cables, latest=latest, ends=ends, now=now)


def gate_missing(*, cables: Sequence[Cable], latest: dict, ends: dict, now: datetime) -> dict[int, list[str]]:
    """The gate over already-loaded latest tests (``selectors.testing.latest.latest_tests``) and ends."""
    oldest = now - retest_interval()
    min_len = otdr_min_length_m()
    out: dict[int, list[str]] = {}
    for c in cables:
        need: list[str] = []
        mine = latest.get(c.pk, {})
        if c.kind in FIBRE_KINDS:
            olts = mine.get(TestKind.OLTS)
            n = fibres_in_use(c, ends.get(c.pk, []))
            if olts is None:
                need.append(f"a power-meter (OLTS) test of {_fibres(n)}")
            elif olts.verdict not in PASSING:
                need.append(
                    f"a passing power-meter test (the last one, {human_date(olts.tested_at)}, failed)"
                )
            elif olts.tested_at < oldest:
                need.append(
                    f"a power-meter test newer than {retest_interval().days} days (last {human_date(olts.tested_at)})"
                )
            elif olts.fibres_passed < n:
                need.append(f"power-meter results on {_fibres(n)} (only {olts.fibres_passed} pass)")
            exempt = c.length_m is not None and float(c.length_m) < min_len
            if not exempt:
                otdr = mine.get(TestKind.OTDR)
                why = "" if c.length_m is not None else " (length not recorded)"
                if otdr is None:
                    need.append(f"an OTDR trace{why}")
                elif otdr.verdict not in PASSING:
                    # "unknown": no budget applied, or the trace did not fit the cable (its fibre
                    # end far from the recorded length): not judged, so it satisfies nothing.
                    how = "failed" if otdr.verdict == Verdict.FAIL else "was not judged: see its warnings"
                    need.append(f"a passing OTDR trace (the last one, {human_date(otdr.tested_at)}, {how})")
                elif otdr.tested_at < oldest:
                    need.append(
                        f"an OTDR trace newer than {retest_interval().days} days (last {human_date(otdr.tested_at)})"
                    )
        elif c.kind in SEALED_KINDS:
            q = mine.get(TestKind.QUALIFICATION)
            if q is None:
                need.append("a link qualification (EEPROM identity, speed and width, BER soak)")
            elif q.verdict not in PASSING:
                need.append(f"a passing link qualification (the last one, {human_date(q.tested_at)}, failed)")
        out[c.pk] = need
    return out


def cable_gate_check(*, cable: Cable, now: datetime | None = None) -> list[str]:
    """What one cable still needs before it may go into production (empty list: nothing)."""
    return cables_gate(cables=[cable], now=now)[cable.pk]


def gate_message(cable: Cable, missing: list[str]) -> str:
    """The refusal a user reads when the gate holds a cable back."""
    return f"{cable.label} cannot go into production: it needs " + "; ".join(missing) + "."
