"""The retest badge the cable and rack pages show: overdue, due soon, ok or none."""

from __future__ import annotations

from datetime import date, timedelta

from inventory.selectors.retests.overdue import NOT_RETESTED

DUE_SOON_DAYS = 14


def retest_state(due: date | None, today: date, status: str = "") -> str:
    """``overdue``, ``soon`` (within two weeks), ``ok`` or ``none`` (no retest scheduled, or a
    cable of ``status`` that is not retested: planned or retired, whatever date is left on it)."""
    if due is None or status in NOT_RETESTED:
        return "none"
    if due < today:
        return "overdue"
    if due <= today + timedelta(days=DUE_SOON_DAYS):
        return "soon"
    return "ok"
