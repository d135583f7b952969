"""Demo seed steps after the cabling: the fibre test history, the links and the test records."""

from __future__ import annotations

from datetime import date, timedelta
from itertools import chain

import numpy as np
from django.db import connection

from inventory.core.choices import (
    CableKind,
    CableRole,
    CableStatus,
    Direction,
    FecType,
    ReferenceMethod,
    TestKind,
    Verdict,
)
from inventory.db import bulk
from inventory.db.copy import binary_scalars, copy_write
from inventory.models import CableTest, FibreResult, Link, LinkSegment
from inventory.services.demo.builder import Builder, Rec, Table, dt

# (cable, fibres, budget dB, sessions: (day, loss per fibre))
TestPlan = tuple[Rec, int, float, list[tuple[date, list[float]]]]


def plan_tests(b: Builder) -> list[TestPlan]:
    """Power-meter sessions for every fibre cable: commissioning, then retests (some overdue).

    Planned before the cables are written, so their first history row already carries the
    retest due date and status.
    """
    rng = b.rng
    plans: list[TestPlan] = []
    for c in b.cables:
        if c.kind not in CableKind.fibre():
            continue
        fibres = 8 if c.role != CableRole.TRUNK else 24
        budget = 0.75 * 2 + 0.5 * float(c.length_m) / 1000 if c.role == CableRole.TRUNK else 1.5
        runs = [c.install_date + timedelta(days=1)]
        while runs[-1] + timedelta(days=b.interval) < b.as_of - timedelta(days=rng.randint(-10, 30)):
            runs.append(runs[-1] + timedelta(days=b.interval + rng.randint(-5, 12)))
            if rng.random() < 0.35 or len(runs) >= 3:  # sites fall behind on retests
                break
        base = rng.uniform(0.25, 0.7)
        sessions = []
        for n_run, when in enumerate(runs):
            drift = 0.0 if n_run == 0 else rng.choice([0, 0, 0, 0.05, 0.1, 0.6, 1.2])
            sessions.append(
                (when, [round(base + drift + rng.uniform(-0.08, 0.12), 2) for _ in range(fibres)])
            )
        if max(sessions[-1][1]) > budget:
            c.status = CableStatus.DEGRADED
        c.retest_due = runs[-1] + timedelta(days=b.interval)
        plans.append((c, fibres, budget, sessions))
    return plans


def seed_links(b: Builder, *, w: dict) -> int:
    """A link per collected path (ends ordered by port id) and its cable segments; returns the count."""
    link_t, segs = Table(Link), []
    for a, z, path, pmd in b.links:
        a_, z_ = (a, z) if a.pk < z.pk else (z, a)
        budget = 3.0 if pmd == "400GBASE-DR4" else None
        link_t.new(
            a_port_id=a_.pk,
            b_port_id=z_.pk,
            pmd=pmd,
            fec=FecType.KP4,
            speed_gbps=a.speed_gbps,
            lanes=a.lane_count,
            lane_rate_gbaud=106.25 if a.speed_gbps == 400 else 53.125,
            loss_budget_db=budget,
            link_class="leaf-spine" if len(path) > 1 else ("frontend" if pmd.endswith("CR4") else "rail"),
        )
    link_t.write(**w)
    for link, (_, _, path, _) in zip(link_t.recs, b.links, strict=True):
        segs += [[link.pk, i, c.pk] for i, c in enumerate(path)]
    bulk.bulk_insert_rows(LinkSegment, ["link_id", "seq", "cable_id"], segs, **w)
    return len(link_t.recs)


def _verdict(margin: float) -> str:
    return Verdict.PASS if margin >= 0.3 else (Verdict.MARGINAL if margin >= 0 else Verdict.FAIL)


def seed_tests(b: Builder, *, plans: list[TestPlan], seed: int, w: dict) -> int:
    """The planned OLTS sessions (OTDR summaries on trunks), a qualification per sealed cable,
    and each OLTS session's per-fibre results; returns the number of tests."""
    rng = b.rng
    test_t, results = Table(CableTest), []
    for c, _fibres, budget, sessions in plans:
        for n_run, (when, losses) in enumerate(sessions):
            worst = max(losses)
            margin = round(budget - worst, 2)
            t = test_t.new(
                cable_id=c.pk,
                kind=TestKind.OLTS,
                tested_at=dt(when),
                instrument="Fluke CertiFiber Pro",
                instrument_serial=f"CFP{seed:02d}{rng.randrange(1000):03d}",
                reference_method=ReferenceMethod.ONE_JUMPER,
                wavelength_nm=1310,
                loss_db=worst,
                budget_db=round(budget, 2),
                margin_db=margin,
                verdict=_verdict(margin),
                is_baseline=n_run == 0,
            )
            results.append((t, losses))
            if c.role == CableRole.TRUNK:  # long enough for an OTDR: a trace summary per session
                otdr_loss = round(max(losses) - 0.04, 2)
                otdr_margin = round(budget - otdr_loss, 2)
                test_t.new(
                    cable_id=c.pk,
                    kind=TestKind.OTDR,
                    tested_at=dt(when),
                    instrument="EXFO FTBx-730C",
                    wavelength_nm=1310,
                    loss_db=otdr_loss,
                    budget_db=round(budget, 2),
                    margin_db=otdr_margin,
                    verdict=_verdict(otdr_margin),
                    is_baseline=n_run == 0,
                    details={"source": "demo", "summary_only": True},
                )
    for c in b.cables:  # sealed DAC/ACC/AOC: a link qualification at bring-up
        if c.kind in CableKind.sealed():
            test_t.new(
                cable_id=c.pk,
                kind=TestKind.QUALIFICATION,
                tested_at=dt(c.install_date + timedelta(days=1)),
                verdict=Verdict.PASS,
                is_baseline=True,
                details={"source": "demo", "link_up": True, "soak_minutes": 15, "pre_fec_ber": 1e-9},
            )
    test_t.write(**w)
    _write_fibre_results(results, w=w)
    return len(test_t.recs)


def _write_fibre_results(results: list[tuple[Rec, list[float]]], *, w: dict) -> None:
    """One row per fibre of every OLTS session (8.5 million at 131,072 GPUs).

    PostgreSQL: one COPY BINARY whose columns numpy builds (the ids come from the column's
    default), because formatting that many rows one by one in Python took over a minute.
    ``FibreResult`` keeps no history. SQLite: the ordinary bulk writer.
    """
    if connection.vendor != "postgresql":
        bulk.bulk_insert_rows(
            FibreResult,
            ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"],
            [
                [
                    t.pk,
                    i + 1,
                    1310,
                    Direction.A_TO_B,
                    loss,
                    Verdict.PASS if loss <= t.budget_db else Verdict.FAIL,
                ]
                for t, losses in results
                for i, loss in enumerate(losses)
            ],
            **w,
        )
        return
    if not results:
        return
    counts = np.fromiter((len(losses) for _, losses in results), dtype=np.int64, count=len(results))
    n = int(counts.sum())
    test_ids = np.repeat(np.fromiter((t.pk for t, _ in results), dtype=np.int64, count=len(results)), counts)
    budgets = np.repeat(
        np.fromiter((t.budget_db for t, _ in results), dtype=np.float64, count=len(results)), counts
    )
    losses = np.fromiter(chain.from_iterable(losses for _, losses in results), dtype=np.float64, count=n)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    fibres = np.arange(n, dtype=np.int64) - starts + 1
    # "pass" and "fail" are both four bytes, so the verdict is a fixed-size field too.
    verdicts = np.where(losses <= budgets, Verdict.PASS.encode(), Verdict.FAIL.encode())
    direction = Direction.A_TO_B.encode()
    data = binary_scalars(
        n,
        [
            (">i8", 8, test_ids),
            (">i2", 2, fibres),
            (">i4", 4, 1310),
            (f"S{len(direction)}", len(direction), direction),
            (">f8", 8, losses),
            ("S4", 4, verdicts),
        ],
    )
    columns = ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"]
    with connection.cursor() as cur:
        copy_write(cur.cursor, FibreResult._meta.db_table, columns, data, binary=True)
