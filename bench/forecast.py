"""Benchmark: the full failure forecast and link risk ranking over 1,000,000 transceivers.

PostgreSQL generates the fleet itself (``INSERT ... SELECT ... FROM generate_series``, no model
instances, no rows through Python) inside a transaction that is rolled back at the end, so the
database is left as it was: 1,000,000 installed transceivers (and ~2% more that failed, with
closed placements) in twin-port cages on 31,250 switches over two sites and five vendors with
monthly date-code lots; 1,000,000 links (one per twin-port pair); thin test margins and alerts
on a few thousand links. Then times ``forecast_compute`` (every aggregate, the Gamma-Poisson
rates, spares, cost, the risk ranking of every link) and reports its phases. Target: under 5 s.

Two fleets, each built, timed and rolled back in turn:

* ``bad_lot``: one lot fails at 25%/yr (BenchV0 2025-06); the ranking may take its fast path
  (score only links touching the standout cohorts, proven exact);
* ``healthy``: the same fleet with every lot at 2%: nothing stands out, so (at 1M) every
  link is scored (the full scan).

``risk_pruned`` says which path ranked. ``BENCH_FORECAST_N`` sets another fleet size and
``BENCH_FORECAST_FLEETS`` (``bad_lot,healthy``) picks fleets while developing. Needs
PostgreSQL (skipped on SQLite).

    DATABASE_URL=postgres://... python -m bench forecast      # via the bench runner
    DATABASE_URL=postgres://... python bench/forecast.py      # directly
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import contextmanager
from datetime import UTC, datetime

CAGES_PER_DEVICE = 32
TARGET_S = 5.0


class _Rollback(Exception):
    pass


def _insert_select(model, exprs: dict[str, str], tail: str, params: dict) -> int:
    """``INSERT INTO <model> (...) SELECT <exprs> <tail>``: rows made by the database itself.

    ``exprs`` maps attnames to SQL expressions over ``tail`` (usually ``FROM generate_series``);
    every other column gets its model default (``auto_now`` fields: ``%(now)s``), so the bench
    follows the models without listing every column. Write modulo as `` % `` (with spaces).
    Returns the row count.
    """
    from django.db import connection, models
    from psycopg.types.json import Jsonb

    meta = model._meta
    cols, sel = [], []
    params = dict(params)
    for f in meta.concrete_fields:
        if f.primary_key and f.attname not in exprs:
            continue  # the identity column numbers the rows
        cols.append(connection.ops.quote_name(f.column))
        if f.attname in exprs:
            sel.append(exprs[f.attname])
        elif getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
            sel.append("%(now)s")
        else:
            key = f"default_{f.attname}"
            value = f.get_default()
            params[key] = Jsonb(value) if isinstance(f, models.JSONField) else value
            sel.append(f"%({key})s")
    missing = set(exprs) - {f.attname for f in meta.concrete_fields}
    if missing:
        raise ValueError(f"{model.__name__} has no column(s) {sorted(missing)}")
    # `` % `` (modulo, written with spaces) is doubled for the driver's placeholder syntax.
    body = f"SELECT {', '.join(sel)} {tail}".replace(" % ", " %% ")
    sql = f"INSERT INTO {meta.db_table} ({', '.join(cols)}) {body}"
    t = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute(sql, params)
        if os.environ.get("BENCH_VERBOSE"):
            print(f"    {meta.db_table}: {cur.rowcount} rows, {time.perf_counter() - t:.2f} s", flush=True)
        return cur.rowcount


def _base(model) -> int:
    """The highest id in use: generated ids start after it (the bench runs in a rolled-back
    transaction on its own database, so nothing else allocates ids meanwhile)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(f"SELECT COALESCE(MAX(id), 0) FROM {model._meta.db_table}")  # noqa: S608 - model meta
        return cur.fetchone()[0]


@contextmanager
def _indexes_rebuilt_after(models):
    """Drop the plain secondary indexes of ``models``' tables, yield, then create them again.

    Building an index once over a million sorted rows is several times cheaper than updating
    it row by row. Constraint-backed indexes (primary keys, unique constraints) stay. DDL is
    transactional on PostgreSQL: the bench's rollback restores everything either way.
    """
    from django.db import connection

    tables = [m._meta.db_table for m in models]
    with connection.cursor() as cur:
        cur.execute(
            """
            SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
            FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
            WHERE t.relname = ANY(%s) AND NOT i.indisprimary
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
            """,
            [tables],
        )
        indexes = cur.fetchall()
        cur.execute("SET LOCAL maintenance_work_mem = '512MB'")
        for name, _ in indexes:
            cur.execute(f"DROP INDEX {name}")
    yield
    t = time.perf_counter()
    with connection.cursor() as cur:
        for _, ddl in indexes:
            cur.execute(ddl)
    if os.environ.get("BENCH_VERBOSE"):
        print(f"    {len(indexes)} indexes built: {time.perf_counter() - t:.2f} s", flush=True)


def _build(n: int, now: datetime, report, *, bad_lot: bool = True, label: str = "bad_lot") -> None:
    """Generate the fleet inside the database (``INSERT ... SELECT generate_series``).

    Python only creates the few dozen sites, racks, vendors and models; the 31,250 switches,
    1M cages, 2M ports, ~1.02M modules with their placements, 1M links and the evidence rows
    are made by PostgreSQL itself, deterministically (``setseed``). ``bad_lot=False`` makes the
    healthy fleet: the same size and shape, every lot at 2%.
    """
    from django.db import connection

    from inventory.core.choices import FormFactor
    from inventory.db import bulk
    from inventory.models import (
        Alert,
        Cable,
        CableTest,
        Cage,
        Device,
        Link,
        LinkSegment,
        Port,
        Rack,
        Room,
        Row,
        Site,
        Transceiver,
        TransceiverModel,
        TransceiverPlacement,
        Vendor,
    )

    t0 = time.perf_counter()
    kw = dict(now=now, history=False, reason="bench forecast")
    sites = bulk.bulk_insert_rows(Site, ["name", "slug"], [[f"Bench {s}", f"bench-{s}"] for s in "AB"], **kw)
    rooms = bulk.bulk_insert_rows(Room, ["site_id", "name"], [[s, "Hall 1"] for s in sites], **kw)
    rows_ = bulk.bulk_insert_rows(Row, ["room_id", "name"], [[r, "R1"] for r in rooms], **kw)
    devices_n = -(-n // CAGES_PER_DEVICE)
    devices_n += devices_n % 2
    racks_n = -(-devices_n // 16)
    racks = bulk.bulk_insert_rows(
        Rack, ["row_id", "name", "position"], [[rows_[r % 2], f"BR{r:05d}", r] for r in range(racks_n)], **kw
    )
    vendors = bulk.bulk_insert_rows(
        Vendor, ["name", "slug"], [[f"BenchV{v}", f"benchv{v}"] for v in range(5)], **kw
    )
    models = bulk.bulk_insert_rows(
        TransceiverModel,
        [
            "vendor_id",
            "part_number",
            "form_factor",
            "pmd",
            "speed_gbps",
            "lanes",
            "lane_rate_gbps",
            "logical_ports",
            "connector_type",
            "connector_count",
        ],
        [
            [v, f"BP-{k}", FormFactor.OSFP, "400GBASE-DR4", 800, 8, 100, 2, "MPO", 2]
            for k, v in enumerate(vendors)
        ],
        **kw,
    )
    b = {m: _base(m) for m in (Device, Cage, Port, Transceiver, TransceiverPlacement, Link, Cable)}
    p = {
        "now": now,
        "n": n,
        "devices": devices_n,
        "racks": racks,
        "models": models,
        "cpd": CAGES_PER_DEVICE,
        "dev0": b[Device],
        "cage0": b[Cage],
        "port0": b[Port],
        "x0": b[Transceiver],
        "pl0": b[TransceiverPlacement],
        "link0": b[Link],
        "cable0": b[Cable],
        "bad_lot": bad_lot,
    }
    with connection.cursor() as cur:
        cur.execute("SELECT setseed(0.42)")
        # Generated rows reference ids made in the same statement set: skip the per-row deferred
        # foreign-key triggers for this transaction (it is rolled back at the end anyway).
        cur.execute("SET LOCAL session_replication_role = replica")
    big = (Device, Cage, Port, Transceiver, TransceiverPlacement, Link)
    with _indexes_rebuilt_after(big):
        _insert_select(
            Device,
            {
                "id": "%(dev0)s + 1 + d",
                "name": "'bsw-' || lpad(d::text, 6, '0')",
                "role": "'leaf'",
                "rack_id": "(%(racks)s::bigint[])[d / 16 + 1]",
                "position_u": "1 + (d % 16) * 2",
                "height_u": "1",
            },
            "FROM generate_series(0, %(devices)s - 1) d",
            p,
        )
        _insert_select(
            Cage,
            {
                "id": "%(cage0)s + 1 + i",
                "device_id": "%(dev0)s + 1 + i / %(cpd)s",
                "name": "'OSFP' || (i % %(cpd)s + 1)",
                "index": "i % %(cpd)s + 1",
                "form_factor": "'OSFP'",
                "lanes": "8",
            },
            "FROM generate_series(0, %(n)s - 1) i",
            p,
        )
        _insert_select(
            Port,
            {
                "id": "%(port0)s + 1 + 2 * i + k",
                "device_id": "%(dev0)s + 1 + i / %(cpd)s",
                "name": "'Ethernet' || (i % %(cpd)s + 1) || '/' || (k + 1)",
                "kind": "'interface'",
                "fabric": "'ethernet'",
                "cage_id": "%(cage0)s + 1 + i",
                "connector": "k + 1",
                "lane_start": "4 * k",
                "lane_count": "4",
                "speed_gbps": "400",
            },
            "FROM generate_series(0, %(n)s - 1) i CROSS JOIN generate_series(0, 1) k",
            p,
        )
        # Modules: five vendors, daily date codes over two years (monthly lots); lot 2025-06 of
        # vendor 0 fails at 25%/yr, the rest at 2%. Each cage got a module ``days`` ago; with the
        # constant-hazard probability for that time it failed at a uniform moment since and was
        # replaced by one of the same lot (so exposure and failures agree with the rate).
        with connection.cursor() as cur:
            cur.execute(
                """
                CREATE TEMP TABLE bench_fleet ON COMMIT DROP AS
                SELECT i, m, dc, failed, first_in,
                       CASE WHEN failed THEN first_in + (%(now)s::timestamptz - first_in) * v
                            ELSE first_in END AS inst
                FROM (
                    SELECT i, m, dc, v, %(now)s::timestamptz - make_interval(days => days) AS first_in,
                           u < 1 - power(1 - CASE WHEN %(bad_lot)s AND m = 0 AND dc LIKE '2506%%'
                                                  THEN 0.25 ELSE 0.02 END,
                                         days / 365.0) AS failed
                    FROM (
                        SELECT i, i %% 5 AS m, days, u, v,
                               to_char(%(now)s::timestamptz - make_interval(days => days + 30 + (w * 60)::int),
                                       'YYMMDD') AS dc
                        FROM (
                            SELECT i, 30 + (random() * 700)::int AS days, random() AS u,
                                   0.05 + 0.9 * random() AS v, random() AS w
                            FROM generate_series(0, %(n)s - 1) i
                        ) r
                    ) s
                ) t
                """,
                p,
            )
        fleet = "FROM bench_fleet"
        _insert_select(
            Transceiver,
            {
                "id": "%(x0)s + 1 + i",
                "model_id": "(%(models)s::bigint[])[m + 1]",
                "serial": "'BX' || lpad(i::text, 8, '0')",
                "date_code": "dc",
                "status": "'installed'",
                "cage_id": "%(cage0)s + 1 + i",
            },
            fleet,
            p,
        )
        _insert_select(
            Transceiver,
            {
                "id": "%(x0)s + 1 + %(n)s + i",
                "model_id": "(%(models)s::bigint[])[m + 1]",
                "serial": "'BF' || lpad(i::text, 8, '0')",
                "date_code": "dc",
                "status": "'retired'",
            },
            fleet + " WHERE failed",
            p,
        )
        _insert_select(
            TransceiverPlacement,
            {
                "id": "%(pl0)s + 1 + i",
                "transceiver_id": "%(x0)s + 1 + i",
                "cage_id": "%(cage0)s + 1 + i",
                "installed_at": "inst",
                "end_reason": "''",
            },
            fleet,
            p,
        )
        _insert_select(
            TransceiverPlacement,
            {
                "id": "%(pl0)s + 1 + %(n)s + i",
                "transceiver_id": "%(x0)s + 1 + %(n)s + i",
                "cage_id": "%(cage0)s + 1 + i",
                "installed_at": "first_in",
                "removed_at": "inst",
                "end_reason": "'failed'",
            },
            fleet + " WHERE failed",
            p,
        )
        # Links: port k of device 2j <-> port k of device 2j+1 (full device pairs only).
        per_dev = 2 * CAGES_PER_DEVICE
        p["links"] = (n // CAGES_PER_DEVICE // 2) * per_dev
        p["per_dev"] = per_dev
        _insert_select(
            Link,
            {
                "id": "%(link0)s + 1 + g",
                "a_port_id": "%(port0)s + 1 + (g / %(per_dev)s) * 2 * %(per_dev)s + g % %(per_dev)s",
                "b_port_id": "%(port0)s + 1 + ((g / %(per_dev)s) * 2 + 1) * %(per_dev)s + g % %(per_dev)s",
                "pmd": "'400GBASE-DR4'",
                "fec": "'RS544'",
                "speed_gbps": "400",
                "lanes": "4",
                "lane_rate_gbaud": "106.25",
                "loss_budget_db": "3.0",
            },
            "FROM generate_series(0, %(links)s - 1) g",
            p,
        )

    # Evidence: 10,000 links with a tested cable (margins -0.5..1.5 dB), 5,000 with an alert.
    p["cables"] = min(10_000, p["links"])
    p["alerts"] = min(5_000, p["links"])
    with connection.cursor() as cur:
        cur.execute(
            """
            CREATE TEMP TABLE bench_pick ON COMMIT DROP AS
            SELECT row_number() OVER () AS k, id AS link_id FROM (
                SELECT id FROM inventory_link WHERE id > %(link0)s ORDER BY random() LIMIT %(cables)s
            ) s
            """,
            p,
        )
    _insert_select(
        Cable,
        {
            "id": "%(cable0)s + k",
            "label": "'BC' || lpad(k::text, 7, '0')",
            "kind": "'SMF_OS2'",
            "status": "'in_production'",
            "install_date": "(%(now)s::timestamptz - interval '400 days')::date",
        },
        "FROM bench_pick",
        p,
    )
    _insert_select(
        LinkSegment, {"link_id": "link_id", "seq": "0", "cable_id": "%(cable0)s + k"}, "FROM bench_pick", p
    )
    _insert_select(
        CableTest,
        {
            "cable_id": "%(cable0)s + k",
            "kind": "'olts'",
            "tested_at": "%(now)s::timestamptz - make_interval(days => 1 + (random() * 299)::int)",
            "margin_db": "round((random() * 2 - 0.5)::numeric, 2)",
            "loss_db": "1.0",
            "budget_db": "1.5",
        },
        "FROM bench_pick",
        p,
    )
    _insert_select(
        Alert,
        {
            "rule": "(ARRAY['fec_degradation', 'rx_power_drift', 'link_flap'])[1 + k % 3]",
            "severity": "(ARRAY['warning', 'notify', 'page'])[1 + (k / 3) % 3]",
            "state": "CASE WHEN k % 2 = 0 THEN 'open' ELSE 'resolved' END",
            "link_id": "link_id",
            "opened_at": "%(now)s::timestamptz - make_interval(days => 1 + (k % 200)::int)",
            "updated_at": "%(now)s",
            "resolved_at": "CASE WHEN k % 2 = 0 THEN NULL ELSE %(now)s END",
            "summary": "'bench'",
            "key": "'bench:' || link_id",
        },
        "FROM bench_pick WHERE k <= %(alerts)s",
        p,
    )
    t = time.perf_counter()
    with connection.cursor() as cur:
        for model in (*big, Cable, LinkSegment, CableTest, Alert):
            cur.execute(f"ANALYZE {model._meta.db_table}")
    if os.environ.get("BENCH_VERBOSE"):
        print(f"    analyze: {time.perf_counter() - t:.2f} s", flush=True)
    report(f"forecast.{label}.generate_fleet", time.perf_counter() - t0, "s", "informational")


FLEETS = {"bad_lot": True, "healthy": False}


def _run_fleet(report, *, n: int, label: str, bad_lot: bool) -> None:
    """Build one fleet, time the forecast on it (twice), report, roll everything back."""
    from django.db import transaction

    from inventory.services.forecast import snapshot as forecast_services

    size = "1m_transceivers" if n == 1_000_000 else f"{n}_transceivers"
    name = f"forecast.{label}.full_{size}"
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    try:
        with transaction.atomic():
            _build(n, now, report, bad_lot=bad_lot, label=label)
            timings: dict[str, float] = {}
            t = time.perf_counter()
            payload = forecast_services.forecast_compute(now=now, timings=timings)
            elapsed = time.perf_counter() - t
            for phase, seconds in timings.items():
                report(f"forecast.{label}.phase.{phase}", seconds, "s", "informational")
            report(name, elapsed, "s", f"< {TARGET_S:.0f} s")
            report(f"forecast.{label}.load_average_1m", os.getloadavg()[0], "", "informational (2 cores)")
            # Once more, every link scored (no fast path), on the pages now cached: the full
            # scan is what a fleet with no standout cohort pays.
            timings = {}
            t = time.perf_counter()
            full = forecast_services.forecast_compute(
                now=now,
                params=forecast_services.ForecastParams.from_settings(prune_links=False),
                timings=timings,
            )
            report(f"{name}.full_scan", time.perf_counter() - t, "s", f"< {TARGET_S:.0f} s")
            for phase, seconds in timings.items():
                report(f"forecast.{label}.full_scan.phase.{phase}", seconds, "s", "informational")
            report(f"forecast.{label}.full_scan.load_average_1m", os.getloadavg()[0], "", "informational")
            same = [r["link_id"] for r in full["risk"]["links"]] == [
                r["link_id"] for r in payload["risk"]["links"]
            ]
            report(f"forecast.{label}.full_scan_ranks_the_same_links", float(same), "", "1")
            flagged = [r["cohort"] for r in payload["breakdowns"]["lot"] if r["flagged"]]
            report(
                f"forecast.{label}.installed_modules",
                payload["fleet"]["installed"],
                "modules",
                "informational",
            )
            report(f"forecast.{label}.links_ranked", payload["risk"]["considered"], "links", "informational")
            report(
                f"forecast.{label}.risk_pruned",
                float(payload["risk"]["pruned"]),
                "",
                "informational (1: only links of standout cohorts scored; 0: every link scored)",
            )
            print(f"    {label}: flagged lots:", flagged)
            for r in payload["breakdowns"]["lot"]:
                if r["flagged"]:
                    print(
                        f"      {r['cohort']}: {r['failures']} failures in {r['exposure_years']:.0f} module-years "
                        f"(AFR {r['afr_mean']:.4f}, its part {r['reference_afr']:.4f}, P(above) {r['prob_above_fleet']:.3f})"
                    )
            if bad_lot:
                report(
                    f"forecast.{label}.bad_lot_flagged",
                    float("BenchV0 2025-06" in flagged),
                    "",
                    "1 (the seeded bad lot BenchV0 2025-06)",
                )
            else:
                report(f"forecast.{label}.lots_flagged", float(len(flagged)), "lots", "informational")
            raise _Rollback
    except _Rollback:
        pass


def run(report) -> None:
    """Both fleets: with the seeded bad lot (the ranking may prune to its links) and healthy
    (no cohort stands out: every link is scored). ``BENCH_FORECAST_FLEETS`` picks some
    (comma-separated: ``bad_lot``, ``healthy``)."""
    import django
    from django.db import connection

    if not django.apps.apps.ready:
        django.setup()

    pg = connection.vendor == "postgresql"
    n = int(os.environ.get("BENCH_FORECAST_N", 1_000_000 if pg else 100_000))
    if not pg:
        print("  forecast: needs PostgreSQL (the fleet is generated with generate_series); skipped")
        return
    fleets = [
        f.strip() for f in os.environ.get("BENCH_FORECAST_FLEETS", ",".join(FLEETS)).split(",") if f.strip()
    ]
    unknown = sorted(set(fleets) - set(FLEETS))
    if unknown:
        raise ValueError(f"BENCH_FORECAST_FLEETS: unknown fleet(s) {unknown}; choose from {sorted(FLEETS)}")
    for label in fleets:
        _run_fleet(report, n=n, label=label, bad_lot=FLEETS[label])
        # The rolled-back million rows stay behind as dead tuples in the plant's tables (ports,
        # links, transceivers...): without a VACUUM every later benchmark reads through them.
        t = time.perf_counter()
        with connection.cursor() as cur:
            cur.execute("VACUUM (ANALYZE)")
        report(f"forecast.{label}.vacuum_after_rollback", time.perf_counter() - t, "s", "informational")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    import django

    django.setup()

    def _print(name, value, unit, target):
        print(f"{name:40s} {value:12.3f} {unit:8s} target {target}")

    run(_print)
