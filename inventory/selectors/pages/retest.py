"""The retest badge the cable and rack pages show: overdue, due soon, ok or none."""

from __future__ import annotations

from datetime import date, timedelta

DUE_SOON_DAYS = 14


def retest_state(due: date | None, today: date) -> str:
    """``overdue``, ``soon`` (within two weeks), ``ok`` or ``none`` (no retest scheduled)."""
    if due is None:
        return "none"
    if due < today:
        return "overdue"
    if due <= today + timedelta(days=DUE_SOON_DAYS):
        return "soon"
    return "ok"
