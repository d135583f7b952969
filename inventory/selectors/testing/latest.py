"""The latest and the last passing test of each kind for many cables, in a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from django.db import connection
from django.db.models import Max, Min, QuerySet
from django.utils import timezone

from inventory.core.choices import PASSING
from inventory.db.compiled import CompiledRead
from inventory.models import CableTest

CHUNK = 2000  # ids per IN list (SQLite); PostgreSQL takes far more per round trip
CHUNK_PG = 50_000


def chunk_size() -> int:
    """Ids per ``IN`` list on the database at hand."""
    return CHUNK_PG if connection.vendor == "postgresql" else CHUNK


@dataclass(slots=True)
class LatestTest:
    id: int
    cable_id: int
    kind: str
    tested_at: datetime
    verdict: str
    loss_db: float | None
    margin_db: float | None
    budget_db: float | None
    link_id: int | None
    fibres_passed: int = 0


def id_chunks(ids) -> Iterable:
    if isinstance(ids, QuerySet):
        yield ids
        return
    ids = list(ids)
    size = chunk_size()
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


_LATEST_COLUMNS = (
    "pk",
    "cable_id",
    "kind",
    "tested_at",
    "verdict",
    "loss_db",
    "margin_db",
    "budget_db",
    "link_id",
    "fibres_passed",
)


def _latest_query(cable_ids, kinds: list[str] | None = None) -> QuerySet:
    qs = CableTest.objects.filter(cable_id__any=cable_ids)
    if kinds:
        qs = qs.filter(kind__in=kinds)
    qs = qs.order_by("cable_id", "kind", "-tested_at", "-pk")
    if chunk_size() == CHUNK_PG:
        qs = qs.distinct("cable_id", "kind")  # PostgreSQL DISTINCT ON: one row per pair
    return qs.values_list(*_LATEST_COLUMNS)


# Every kind, for a list of ids (a page of cables and their links' segments): compiled once.
_LATEST = CompiledRead(lambda cable_ids: _latest_query(cable_ids))


def latest_tests(*, cable_ids, kinds: Iterable[str] | None = None) -> dict[int, dict[str, LatestTest]]:
    """The latest test of each kind for every cable: ``{cable_id: {kind: LatestTest}}``.

    ``cable_ids`` is a list or a ``values_list`` queryset (then it runs as one subquery).
    OLTS entries carry ``fibres_passed``, the distinct fibres with a passing result (written
    with the test: ``CableTest.fibres_passed``).
    """
    out: dict[int, dict[str, LatestTest]] = {}
    kinds = list(kinds) if kinds else None
    for chunk in id_chunks(cable_ids):
        rows = _latest_query(chunk, kinds) if kinds or not isinstance(chunk, list) else _LATEST(chunk)
        for row in rows:
            per = out.setdefault(row[1], {})
            if row[2] not in per:
                per[row[2]] = LatestTest(*row[:9], row[9] or 0)
    return out


def last_passing_tests(*, cable_ids, kinds: Iterable[str] | None = None) -> dict[int, dict[str, datetime]]:
    """When each cable last passed each kind of test: ``{cable_id: {kind: tested_at}}``.

    One aggregate query for any number of cables (``cable_ids``: a list, or a ``values_list``
    queryset used as a subquery). "Passing" is pass or marginal. For the retest scheduler:
    a cable's retest is due ``CABLETRACK_RETEST_INTERVAL_DAYS`` after the relevant date.
    """
    out: dict[int, dict[str, datetime]] = {}
    for chunk in id_chunks(cable_ids):
        qs = CableTest.objects.filter(cable_id__any=chunk, verdict__in=PASSING)
        if kinds:
            qs = qs.filter(kind__in=list(kinds))
        for cable_id, kind, last in (
            qs.values("cable_id", "kind")
            .annotate(last=Max("tested_at"))
            .values_list("cable_id", "kind", "last")
        ):
            out.setdefault(cable_id, {})[kind] = last
    return out


def first_test_day(cable_id: int) -> date | None:
    """The day of a cable's first test, if any: it was plugged in by then, so the day a planned
    cable went in is that day or earlier (``services.plant.cables.install_date_for``, and the
    date the cable page's "Mark installed" offers)."""
    first = CableTest.objects.filter(cable_id=cable_id).aggregate(first=Min("tested_at"))["first"]
    return timezone.localdate(first) if first is not None else None
