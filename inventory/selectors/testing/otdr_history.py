"""What an OTDR upload compares with, for a whole batch of cables in a fixed number of queries:
each cable's OTDR baseline (its traces), and the latest earlier trace of every fibre at 1310 and
at 1550 nm (a bend shows only by comparing the two, and testers shoot them in separate files,
often in separate sessions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Q

from inventory.core.choices import TestKind
from inventory.models import CableTest, OtdrTrace
from inventory.selectors.testing.latest import id_chunks

BEND_BANDS = (1310, 1550)  # a bend loses more at 1550 nm than at 1310 nm (single-mode)
BAND_SLACK_NM = 10


def bend_band(wavelength_nm: float | None) -> int | None:
    """1310 or 1550 when the trace is at (about) that wavelength, else None."""
    if wavelength_nm is None:
        return None
    return next((b for b in BEND_BANDS if abs(wavelength_nm - b) <= BAND_SLACK_NM), None)


@dataclass
class PriorTrace:
    """A stored trace, as the comparisons need it."""

    test_id: int
    tested_at: datetime
    fibre: int
    wavelength_nm: float | None
    total_loss_db: float | None
    events: list[dict]


@dataclass
class PriorBaseline:
    test_id: int
    tested_at: datetime
    traces: list[PriorTrace] = field(default_factory=list)


@dataclass
class OtdrPrior:
    baselines: dict[int, PriorBaseline]  # cable id -> its OTDR baseline
    latest: dict[tuple[int, int, int], PriorTrace]  # (cable id, fibre, 1310|1550) -> latest trace


def otdr_prior(*, cable_ids: Sequence[int], bend_cable_ids: Sequence[int]) -> OtdrPrior:
    """Baselines of ``cable_ids`` and the latest 1310/1550 nm traces of ``bend_cable_ids``.

    Three queries per chunk of ids whatever the batch size: baseline tests, their traces, and the
    1310/1550 nm traces (newest first; the first per cable, fibre and band wins).
    """
    baselines: dict[int, PriorBaseline] = {}
    for chunk in id_chunks(cable_ids):
        for pk, cable_id, tested_at in (
            CableTest.objects.filter(cable_id__in=chunk, kind=TestKind.OTDR, is_baseline=True)
            .order_by("cable_id", "tested_at", "pk")
            .values_list("pk", "cable_id", "tested_at")
        ):
            baselines.setdefault(cable_id, PriorBaseline(pk, tested_at))
    by_test = {b.test_id: b for b in baselines.values()}
    for chunk in id_chunks(list(by_test)):
        for test_id, fibre, wl, loss, events in OtdrTrace.objects.filter(test_id__in=chunk).values_list(
            "test_id", "fibre", "wavelength_nm", "total_loss_db", "events"
        ):
            b = by_test[test_id]
            b.traces.append(PriorTrace(test_id, b.tested_at, fibre, wl, loss, events))
    latest: dict[tuple[int, int, int], PriorTrace] = {}
    bands = Q()
    for band in BEND_BANDS:
        bands |= Q(wavelength_nm__gte=band - BAND_SLACK_NM, wavelength_nm__lte=band + BAND_SLACK_NM)
    for chunk in id_chunks(bend_cable_ids):
        rows = (
            OtdrTrace.objects.filter(bands, test__cable_id__in=chunk, test__kind=TestKind.OTDR)
            .order_by("-test__tested_at", "-test_id", "-pk")
            .values_list("test__cable_id", "test_id", "test__tested_at", "fibre", "wavelength_nm", "events")
        )
        for cable_id, test_id, tested_at, fibre, wl, events in rows:
            band = bend_band(wl)
            if band is not None:
                latest.setdefault(
                    (cable_id, fibre, band), PriorTrace(test_id, tested_at, fibre, wl, None, events)
                )
    return OtdrPrior(baselines, latest)
