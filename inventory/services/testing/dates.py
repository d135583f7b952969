"""When a test may be dated: from the cable's install date (or, without one, the floor
``CABLETRACK_TEST_DATE_FLOOR``) to ``CABLETRACK_TEST_MAX_FUTURE_SECONDS`` ahead of now.

Every way a test arrives asks this one function (the API, the phone forms, the tester imports,
OTDR uploads): a date outside is a clear 400, never a stored value that breaks the retest
sweep (9999-12-31 plus a 90-day interval is past the calendar) or a test from before the plant.
A cable whose install date is still ahead (a planned one) is held to the floor only.

The instrument's calibration date has bounds too (``calibration_date_problem``): not after the
test it was used for, not before the floor.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from inventory.conf import app_settings
from inventory.selectors.testing.facts import date_floor


def test_date_window(*, install_date: date | None, now: datetime) -> tuple[date, datetime]:
    """(earliest day, latest moment) a test of this cable may carry."""
    floor = date_floor()
    earliest = install_date if install_date is not None and floor <= install_date <= now.date() else floor
    return earliest, now + timedelta(seconds=app_settings.test_max_future_seconds)


def test_date_problem(*, install_date: date | None, at: datetime, now: datetime) -> str | None:
    """Why ``at`` cannot be this cable's test time, or None."""
    earliest, latest = test_date_window(install_date=install_date, now=now)
    if at > latest:
        return f"{at:%Y-%m-%d %H:%M} is in the future: a test can be dated at most {latest:%Y-%m-%d %H:%M} (UTC)."
    if at.date() < earliest:
        what = "the cable's install date" if earliest == install_date else "the earliest test date accepted"
        # isoformat, not %Y: that writes the year 1 as "1" ("1-01-01 is before ...")
        return f"{at.date().isoformat()} is before {what} ({earliest.isoformat()})."
    return None


#: The furthest any time zone is ahead of UTC (UTC+14, Kiribati): a test's own day where it was
#: taken is at most its UTC day plus this, so an instrument calibrated "today" east of UTC is
#: not refused while the test's UTC date is still yesterday.
_FURTHEST_AHEAD_OF_UTC = timedelta(hours=14)


def calibration_date_problem(*, calibration: date | None, tested_at: datetime) -> str | None:
    """Why ``calibration`` cannot be the calibration date of the instrument of a test taken at
    ``tested_at``, or None: after the test's day (where it was taken) is impossible, before
    ``CABLETRACK_TEST_DATE_FLOOR`` a typo of the year. The power-meter session asks it, so the
    API, the phone form and every import read it alike (``olts_validate``)."""
    if calibration is None:
        return None
    if calibration < (floor := date_floor()):
        return (
            f"The instrument's calibration date is before the earliest date accepted "
            f"({calibration.isoformat()}, earliest {floor.isoformat()}): check the year on its calibration label."
        )
    utc = tested_at.astimezone(UTC)
    there = utc.date() if utc.date() == date.max else (utc + _FURTHEST_AHEAD_OF_UTC).date()
    if calibration > there:
        return (
            f"The instrument's calibration date is after the test ({calibration.isoformat()}, tested "
            f"{utc:%Y-%m-%d %H:%M} UTC): give the day it was last calibrated, on its calibration label."
        )
    return None
