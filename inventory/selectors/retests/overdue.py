"""Which cables count as "retest overdue": one condition for the home tile, the cable list's
filter, the retest planning counts and the Prometheus gauges, so each number equals the list it
links to."""

from __future__ import annotations

from datetime import date

from django.db.models import Q

from inventory.core.choices import CableStatus

# A planned cable is not in the plant yet and a retired one has left it: neither is retested,
# whatever date a test or the sweep left on it.
NOT_RETESTED = (CableStatus.PLANNED, CableStatus.RETIRED)


def retest_overdue(today: date, prefix: str = "") -> Q:
    """Due before ``today`` and in the plant. ``prefix`` reaches the cable through a relation
    (``"cable__"`` from its ends)."""
    return Q(**{f"{prefix}retest_due__lt": today}) & ~Q(**{f"{prefix}status__in": NOT_RETESTED})
