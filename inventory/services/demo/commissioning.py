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
from inventory.db import bulk, pipeline
from inventory.db.copy import binary_scalars, copy_write
from inventory.models import CableTest, FibreResult, Link, LinkSegment
from inventory.services.demo.builder import Builder, Rec, Table, dt
from inventory.services.testing.latest_table import cable_test_latest_refresh

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


#: Fibre-to-fibre spread of one session's losses around the cable's level (dB).
SPREAD_LOW, SPREAD_HIGH = -0.08, 0.12
SPREAD = SPREAD_HIGH - SPREAD_LOW


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
        rnd = rng.random
        for n_run, when in enumerate(runs):
            # Most links age quietly; a few percent pick up dirt or a bend (degraded on retest).
            drift = (
                0.0
                if n_run == 0
                else (rng.choice([0.6, 1.2]) if rng.random() < 0.03 else rng.choice([0, 0.05, 0.1]))
            )
            # rng.uniform(SPREAD_LOW, SPREAD_HIGH) per fibre, written out: the same draws and values,
            # without a method call per fibre (millions at 131,072 GPUs).
            level = base + drift
            sessions.append((when, [round(level + (SPREAD_LOW + SPREAD * rnd()), 2) for _ in range(fibres)]))
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


#: The second test window loses this much less per fibre on clean fibre (single-mode 1550 nm and
#: multi-mode 1300 nm attenuate less than 1310 / 850 nm); no reading is below the floor.
WINDOW_STEP_DB = 0.03
LOSS_FLOOR_DB = 0.05


def _fibre_losses(losses: list[float], wavelengths: tuple[int, ...]) -> list[tuple[int, int, float]]:
    """(fibre, wavelength, loss) of one session, for the few the seed edits (a bend); the rest are
    computed all at once by ``_fibre_columns``, to the same values."""
    out = []
    for i, loss in enumerate(losses, start=1):
        for k, wl in enumerate(wavelengths):
            out.append((i, wl, round(max(loss - WINDOW_STEP_DB * k, LOSS_FLOOR_DB), 2)))
    return out


def _worst_loss(losses: list[float]) -> float:
    """The worst of ``_fibre_losses(losses, ...)``: the first window of the lossiest fibre (the
    other windows lose less, and rounding keeps the order)."""
    return round(max(max(losses), LOSS_FLOOR_DB), 2)


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


def seed_tests(b: Builder, *, plans: list[TestPlan], seed: int, w: dict, built_now=lambda *m: None) -> int:
    """The planned OLTS sessions (OTDR summaries on trunks), a qualification per sealed cable,
    and each OLTS session's per-fibre results at every test wavelength; returns the number of
    tests. A few trunks carry a bend found at a retest and a dirty connector at commissioning
    (drawn from their own random source, so the rest of the seed is unchanged). ``built_now``
    (``bulk.indexes_built_at_end``'s) is told once the tests are written."""
    rng = b.rng
    vrng = random.Random(f"demo-test-variety-{seed}")
    test_t, results = Table(CableTest), []
    edited: dict[int, list[tuple[int, int, float]]] = {}  # session number -> its rows, where edited
    trunks = 0
    for c, _fibres, budget, sessions in plans:
        wls = _wavelengths(c)
        findings = {}
        if c.role == CableRole.TRUNK:
            findings = _trunk_findings(vrng, trunks, c, len(sessions))
            trunks += 1
        for n_run, (when, losses) in enumerate(sessions):
            rows = None  # the session's fibre rows where the seed edits them (a bend)
            found = findings.get(n_run, {})
            warnings, details = [], {}
            if "bend" in found:
                fibre, at, extra = found["bend"]
                # A bend that still fits the budget (found by the 1550 nm shot, not by a fail).
                extra = round(min(extra, budget - max(losses) - 0.05), 2)
            if "bend" in found and extra >= 0.15:
                rows = _fibre_losses(losses, wls)
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
            worst = max(x for _, _, x in rows) if rows is not None else _worst_loss(losses)
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
            if rows is not None:
                edited[len(results)] = rows
            results.append((t, losses, wls))
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
    cols = _fibre_columns(results, edited)
    for (t, _, _), n in zip(results, fibres_passed(cols, len(results)).tolist(), strict=True):
        t.fibres_passed = n
    test_t.write(**w)
    built_now(CableTest)
    cable_test_latest_refresh(cable_ids=None)  # one set-based pass over the tests just written
    _write_fibre_results(results, cols, w=w)
    return len(test_t.recs)


#: An OLTS session: its test, the loss per fibre and the wavelengths.
Session = tuple[Rec, list[float], tuple[int, ...]]


def _fibre_columns(
    results: list[Session], edited: dict[int, list[tuple[int, int, float]]]
) -> dict[str, np.ndarray]:
    """Every session's ``_fibre_losses`` rows as columns, computed with numpy (8.5 million rows at
    131,072 GPUs: building them as Python tuples took a quarter of the seed's Python time).

    Rows come per session, per fibre, per wavelength, as ``_fibre_losses`` lists them; the values
    are the same (each loss has two decimals, so ``np.round`` and ``round`` agree); the sessions
    in ``edited`` (by position: a bend) take their own rows.
    """

    def per_session(get, dtype) -> np.ndarray:
        return np.fromiter(map(get, results), dtype=dtype, count=len(results))

    n_fibres = per_session(lambda r: len(r[1]), np.int64)
    n_wls = per_session(lambda r: len(r[2]), np.int64)
    losses = np.fromiter(
        chain.from_iterable(r[1] for r in results), dtype=np.float64, count=int(n_fibres.sum())
    )
    wls_of_fibre = np.repeat(n_wls, n_fibres)  # per fibre of every session: its number of wavelengths
    n = int(wls_of_fibre.sum())
    k = np.arange(n) - np.repeat(np.cumsum(wls_of_fibre) - wls_of_fibre, wls_of_fibre)  # window index
    fibre = np.arange(len(losses)) - np.repeat(np.cumsum(n_fibres) - n_fibres, n_fibres) + 1
    rows_per_session = n_fibres * n_wls
    first_wl = np.repeat(per_session(lambda r: r[2][0], np.int64), rows_per_session)
    last_wl = np.repeat(per_session(lambda r: r[2][-1], np.int64), rows_per_session)
    loss = np.round(np.maximum(np.repeat(losses, wls_of_fibre) - WINDOW_STEP_DB * k, LOSS_FLOOR_DB), 2)
    starts = np.cumsum(rows_per_session) - rows_per_session
    for i, rows in edited.items():  # a bend: a few sessions in a thousand
        loss[starts[i] : starts[i] + len(rows)] = [x for _, _, x in rows]
    budget = np.repeat(per_session(lambda r: r[0].budget_db, np.float64), rows_per_session)
    return {
        # the session's position in ``results``: its test's id once the tests are written
        "session": np.repeat(np.arange(len(results), dtype=np.int64), rows_per_session),
        "fibre": np.repeat(fibre, wls_of_fibre),
        "wavelength_nm": np.where(k == 0, first_wl, last_wl),
        "loss_db": loss,
        # "pass" and "fail" are both four bytes, so the verdict is a fixed-size field too.
        "verdict": np.where(loss <= budget, Verdict.PASS.encode(), Verdict.FAIL.encode()),
    }


def fibres_passed(cols: dict[str, np.ndarray], sessions: int) -> np.ndarray:
    """Per session: its distinct fibres with a passing row (``CableTest.fibres_passed``)."""
    passing = cols["verdict"] == Verdict.PASS.encode()
    keys = cols["session"][passing] * 1024 + cols["fibre"][passing]  # fibres <= 144
    # The rows come session by session, a fibre's wavelengths side by side: the keys are
    # already sorted, and the distinct ones are where a key changes (``np.unique`` sorted all
    # 8.5 million again at 131,072 GPUs, 8 s). Any other order still gets the sort.
    if len(keys) and not np.all(keys[1:] >= keys[:-1]):
        keys = np.sort(keys)
    pairs = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys
    return np.bincount(pairs // 1024, minlength=sessions)


def _write_fibre_results(results: list[Session], cols: dict[str, np.ndarray], *, w: dict) -> None:
    """One row per fibre and wavelength of every OLTS session (8.5 million at 131,072 GPUs).

    The rows are built as numpy columns (``_fibre_columns``). PostgreSQL: one COPY BINARY of
    them (the ids come from the column's default), because formatting that many rows one by one
    in Python took over a minute. ``FibreResult`` keeps no history. SQLite: the ordinary bulk
    writer.
    """
    if not results:
        return
    cols = {
        **cols,
        "test_id": np.fromiter((r[0].pk for r in results), np.int64, len(results))[cols["session"]],
    }
    direction = Direction.A_TO_B.encode()
    if connection.vendor != "postgresql":
        bulk.bulk_insert_rows(
            FibreResult,
            ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"],
            [
                [t, f, wl, Direction.A_TO_B, loss, v.decode()]
                for t, f, wl, loss, v in zip(
                    *(cols[c].tolist() for c in ("test_id", "fibre", "wavelength_nm", "loss_db", "verdict")),
                    strict=True,
                )
            ],
            **w,
        )
        return
    data = binary_scalars(
        len(cols["test_id"]),
        [
            (">i8", 8, cols["test_id"]),
            (">i2", 2, cols["fibre"]),
            (">i4", 4, cols["wavelength_nm"]),
            (f"S{len(direction)}", len(direction), direction),
            (">f8", 8, cols["loss_db"]),
            ("S4", 4, cols["verdict"]),
        ],
    )
    columns = ["test_id", "fibre", "wavelength_nm", "direction", "loss_db", "verdict"]
    table = FibreResult._meta.db_table
    pipeline.submit(lambda cur: copy_write(cur, table, columns, data, binary=True))
