"""Demo seed steps after the cabling: the fibre test history, the links and the test records."""

from __future__ import annotations

import random
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


# A site keeps up with its retests; a few cables (about 3%) slip past their due date.
BEHIND_SHARE = 0.03


def _test_days(b: Builder, install: date) -> list[date]:
    """Commissioning the day after install, then retests a little before each due date, none
    after ``as_of`` (a test is never recorded in the future). Only the last two retests are
    kept (older sessions add rows, not realism). A few cables have skipped their last retest,
    so they are overdue by up to one interval."""
    rng = b.rng
    last_day = b.as_of - timedelta(days=1)
    runs = [min(install + timedelta(days=1), last_day)]
    while True:
        nxt = runs[-1] + timedelta(days=b.interval - rng.randint(1, 40))
        if nxt > last_day:
            break
        runs.append(nxt)
    if len(runs) > 1 and rng.random() < BEHIND_SHARE:
        runs.pop()
    return runs[:1] + runs[1:][-2:]


def plan_tests(b: Builder) -> list[TestPlan]:
    """Power-meter sessions for every fibre cable: commissioning, then retests (a few overdue).

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
        runs = _test_days(b, c.install_date)
        base = rng.uniform(0.25, 0.7)
        sessions = []
        for n_run, when in enumerate(runs):
            # Most links age quietly; a few percent pick up dirt or a bend (degraded on retest).
            drift = (
                0.0
                if n_run == 0
                else (rng.choice([0.6, 1.2]) if rng.random() < 0.03 else rng.choice([0, 0.05, 0.1]))
            )
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
            link_class="leaf-spine"
            if len(path) > 1
            else ("frontend" if pmd.endswith(("CR4", "SR4")) else "rail"),
        )
    link_t.write(**w)
    for link, (_, _, path, _) in zip(link_t.recs, b.links, strict=True):
        segs += [[link.pk, i, c.pk] for i, c in enumerate(path)]
    bulk.bulk_insert_rows(LinkSegment, ["link_id", "seq", "cable_id"], segs, **w)
    return len(link_t.recs)


def _verdict(margin: float) -> str:
    return Verdict.PASS if margin >= 0.3 else (Verdict.MARGINAL if margin >= 0 else Verdict.FAIL)


# Test wavelengths by cable kind: single-mode trunks are shot at both 1310 and 1550 nm (a bend
# shows only as more loss at 1550 nm), jumpers at 1310 nm, multi-mode at 850 and 1300 nm.
def _wavelengths(c: Rec) -> tuple[int, ...]:
    if c.kind in (CableKind.MMF_OM3, CableKind.MMF_OM4, CableKind.MMF_OM5):
        return (850, 1300)
    return (1310, 1550) if c.role == CableRole.TRUNK else (1310,)


FINDING_EVERY = 20  # of every 20 trunks, the 2nd has a bend found at its last retest (1550 nm
# loses more than 1310 nm) and the 3rd a dirty connector at commissioning (cleaned since)


def _fibre_losses(losses: list[float], wavelengths: tuple[int, ...]) -> list[tuple[int, int, float]]:
    """(fibre, wavelength, loss): the second window loses a little less on clean fibre
    (single-mode 1550 nm, multi-mode 1300 nm attenuate less than 1310 / 850 nm)."""
    out = []
    for i, loss in enumerate(losses, start=1):
        for k, wl in enumerate(wavelengths):
            out.append((i, wl, round(max(loss - 0.03 * k, 0.05), 2)))
    return out


def _trunk_findings(vrng: random.Random, k: int, c: Rec, n_sessions: int) -> dict[int, dict]:
    """Which session of trunk number ``k`` shows a bend (the last) or a dirty connector (the
    baseline), and where."""
    out: dict[int, dict] = {}
    length = float(c.length_m)
    if k % FINDING_EVERY == 2:
        out[0] = {"dirty": (round(vrng.choice([0.0, length]), 1), round(vrng.uniform(-49, -41), 1))}
    if k % FINDING_EVERY == 1:
        at = round(vrng.uniform(0.2, 0.8) * length, 1)
        out[n_sessions - 1] = {"bend": (vrng.randint(1, 24), at, round(vrng.uniform(0.6, 1.1), 2))}
    return out


def seed_tests(b: Builder, *, plans: list[TestPlan], seed: int, w: dict) -> int:
    """The planned OLTS sessions (OTDR summaries on trunks), a qualification per sealed cable,
    and each OLTS session's per-fibre results at every test wavelength; returns the number of
    tests. A few trunks carry a bend found at a retest and a dirty connector at commissioning
    (drawn from their own random source, so the rest of the seed is unchanged)."""
    rng = b.rng
    vrng = random.Random(f"demo-test-variety-{seed}")
    test_t, results = Table(CableTest), []
    trunks = 0
    for c, _fibres, budget, sessions in plans:
        wls = _wavelengths(c)
        findings = {}
        if c.role == CableRole.TRUNK:
            findings = _trunk_findings(vrng, trunks, c, len(sessions))
            trunks += 1
        for n_run, (when, losses) in enumerate(sessions):
            rows = _fibre_losses(losses, wls)
            found = findings.get(n_run, {})
            warnings, details = [], {}
            if "bend" in found:
                fibre, at, extra = found["bend"]
                # A bend that still fits the budget (found by the 1550 nm shot, not by a fail).
                extra = round(min(extra, budget - max(losses) - 0.05), 2)
            if "bend" in found and extra >= 0.15:
                short = next(x for f, wl, x in rows if f == fibre and wl == 1310)
                rows = [(f, wl, round(x + extra, 2) if (f, wl) == (fibre, 1550) else x) for f, wl, x in rows]
                long_ = next(x for f, wl, x in rows if f == fibre and wl == 1550)
                warnings.append(
                    f"fibre {fibre}: {long_:.2f} dB at 1550 nm against {short:.2f} dB at 1310 nm: suspected bend"
                )
                details["bend"] = {
                    "fibre": fibre,
                    "distance_m": at,
                    "event_loss_1310_db": 0.05,
                    "event_loss_1550_db": round(0.05 + extra, 2),
                }
            worst = max(x for _, _, x in rows)
            margin = round(budget - worst, 2)
            t = test_t.new(
                cable_id=c.pk,
                kind=TestKind.OLTS,
                tested_at=dt(when),
                instrument="Fluke CertiFiber Pro",
                instrument_serial=f"CFP{seed:02d}{rng.randrange(1000):03d}",
                reference_method=ReferenceMethod.ONE_JUMPER,
                launch_condition="encircled flux" if wls[0] == 850 else "",
                wavelength_nm=wls[0],
                loss_db=worst,
                budget_db=round(budget, 2),
                margin_db=margin,
                verdict=_verdict(margin),
                is_baseline=n_run == 0,
                warnings=warnings,
            )
            results.append((t, rows))
            if c.role == CableRole.TRUNK:  # long enough for an OTDR: a trace summary per session
                otdr_loss = round(max(losses) - 0.04, 2)
                otdr_margin = round(budget - otdr_loss, 2)
                verdict = _verdict(otdr_margin)
                otdr_warnings = []
                if "bend" in details:
                    bend = details["bend"]
                    otdr_warnings.append(
                        f"fibre {bend['fibre']}: Suspected bend at {bend['distance_m']:.1f} m: "
                        f"{bend['event_loss_1550_db']:.2f} dB at 1550 nm against {bend['event_loss_1310_db']:.2f} dB "
                        "at 1310 nm."
                    )
                if "dirty" in found:
                    at, refl = found["dirty"]
                    otdr_warnings.append(
                        f"Suspected dirty or damaged connector at {at:.1f} m: reflectance {refl:.1f} dB is above "
                        "the -55 dB an APC connector should reach: suspected dirty or damaged connector"
                    )
                    details["dirty_connector"] = {"distance_m": at, "reflectance_db": refl}
                    verdict = Verdict.MARGINAL if verdict == Verdict.PASS else verdict
                test_t.new(
                    cable_id=c.pk,
                    kind=TestKind.OTDR,
                    tested_at=dt(when),
                    instrument="EXFO FTBx-730C",
                    wavelength_nm=1310,
                    loss_db=otdr_loss,
                    budget_db=round(budget, 2),
                    margin_db=otdr_margin,
                    verdict=verdict,
                    is_baseline=n_run == 0,
                    warnings=otdr_warnings,
                    details={"source": "demo", "summary_only": True, "wavelengths": list(wls), **details},
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


def _write_fibre_results(results: list[tuple[Rec, list[tuple[int, int, float]]]], *, w: dict) -> None:
    """One row per fibre and wavelength of every OLTS session (8.5 million at 131,072 GPUs).

    ``results``: per test, its ``(fibre, wavelength_nm, loss_db)`` rows. PostgreSQL: one COPY
    BINARY whose columns numpy builds (the ids come from the column's default), because
    formatting that many rows one by one in Python took over a minute. ``FibreResult`` keeps no
    history. SQLite: the ordinary bulk writer.
    """
    if connection.vendor != "postgresql":
        bulk.bulk_insert_rows(
            FibreResult,
            ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"],
            [
                [
                    t.pk,
                    fibre,
                    wl,
                    Direction.A_TO_B,
                    loss,
                    Verdict.PASS if loss <= t.budget_db else Verdict.FAIL,
                ]
                for t, rows in results
                for fibre, wl, loss in rows
            ],
            **w,
        )
        return
    if not results:
        return
    counts = np.fromiter((len(rows) for _, rows in results), dtype=np.int64, count=len(results))
    n = int(counts.sum())
    test_ids = np.repeat(np.fromiter((t.pk for t, _ in results), dtype=np.int64, count=len(results)), counts)
    budgets = np.repeat(
        np.fromiter((t.budget_db for t, _ in results), dtype=np.float64, count=len(results)), counts
    )
    flat = np.array(list(chain.from_iterable(rows for _, rows in results)), dtype=np.float64).reshape(n, 3)
    fibres = flat[:, 0].astype(np.int64)
    wavelengths = flat[:, 1].astype(np.int64)
    losses = flat[:, 2]
    # "pass" and "fail" are both four bytes, so the verdict is a fixed-size field too.
    verdicts = np.where(losses <= budgets, Verdict.PASS.encode(), Verdict.FAIL.encode())
    direction = Direction.A_TO_B.encode()
    data = binary_scalars(
        n,
        [
            (">i8", 8, test_ids),
            (">i2", 2, fibres),
            (">i4", 4, wavelengths),
            (f"S{len(direction)}", len(direction), direction),
            (">f8", 8, losses),
            ("S4", 4, verdicts),
        ],
    )
    columns = ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"]
    with connection.cursor() as cur:
        copy_write(cur.cursor, FibreResult._meta.db_table, columns, data, binary=True)
