"""Benchmark: the full failure forecast and link risk ranking over 1,000,000 transceivers.

Generates the fleet with COPY (``inventory.bulk.bulk_insert_rows``) inside a transaction that
is rolled back at the end, so the database is left as it was: 1,000,000 installed
transceivers (and ~2% more that failed, with closed placements) in twin-port cages on 31,250
switches over two sites and five vendors with monthly date-code lots, one bad; 1,000,000
links (one per twin-port pair); thin test margins and alerts on a few thousand links.
Then times ``forecast_compute`` (every aggregate, the Gamma-Poisson rates, spares, cost, the
risk ranking of every link). Target: under 5 s on PostgreSQL. On SQLite (no DATABASE_URL) the
fleet is 100,000 transceivers and the figure is reported under its own name.

    DATABASE_URL=postgres://... python -m bench forecast      # via the bench runner
    DATABASE_URL=postgres://... python bench/forecast.py      # directly
"""

from __future__ import annotations

import os
import random
import sys
import time
from datetime import UTC, datetime, timedelta

CAGES_PER_DEVICE = 32
TARGET_S = 5.0


class _Rollback(Exception):
    pass


def _build(n: int, now: datetime, report) -> None:
    from django.db import connection

    from inventory import bulk
    from inventory.choices import (
        AlertState,
        CableKind,
        CableStatus,
        DeviceRole,
        FormFactor,
        PlacementEnd,
        Severity,
        TestKind,
        TransceiverStatus,
    )
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

    rng = random.Random(42)
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
    devs = bulk.bulk_insert_rows(
        Device,
        ["name", "role", "rack_id", "position_u", "height_u"],
        [[f"bsw-{d:06d}", DeviceRole.LEAF, racks[d // 16], 1 + (d % 16) * 2, 1] for d in range(devices_n)],
        **kw,
    )
    cage_rows = [
        [d, f"OSFP{c + 1}", c + 1, FormFactor.OSFP, 8] for d in devs for c in range(CAGES_PER_DEVICE)
    ][:n]
    cages = bulk.bulk_insert_rows(
        Cage, ["device_id", "name", "index", "form_factor", "lanes"], cage_rows, **kw
    )
    del cage_rows
    port_rows = []
    for cage, dev_idx in zip(cages, range(len(cages)), strict=True):
        d = devs[dev_idx // CAGES_PER_DEVICE]
        c = dev_idx % CAGES_PER_DEVICE
        for k in range(2):
            port_rows.append(
                [d, f"Ethernet{c + 1}/{k + 1}", "interface", "ethernet", cage, k + 1, 4 * k, 4, 400]
            )
    ports = bulk.bulk_insert_rows(
        Port,
        [
            "device_id",
            "name",
            "kind",
            "fabric",
            "cage_id",
            "connector",
            "lane_start",
            "lane_count",
            "speed_gbps",
        ],
        port_rows,
        **kw,
    )
    del port_rows

    # Modules: five vendors, monthly lots over two years; lot 2024-06 of vendor 0 is bad.
    x_rows, installed, failed_rows = [], [], []
    for i, cage in enumerate(cages):
        m = i % len(models)
        days = rng.randint(30, 730)
        inst = now - timedelta(days=days)
        dc = f"{inst - timedelta(days=rng.randint(30, 90)):%y%m%d}"
        x_rows.append([models[m], f"BX{i:08d}", dc, TransceiverStatus.INSTALLED, cage])
        installed.append(inst)
        afr = 0.25 if (m == 0 and dc.startswith("2406")) else 0.02
        if rng.random() < 1 - (1 - afr) ** (days / 365):
            before = inst - timedelta(days=rng.randint(60, 400))
            failed_rows.append(
                [models[m], f"BF{i:08d}", dc, TransceiverStatus.RETIRED, None, cage, before, inst]
            )
    xids = bulk.bulk_insert_rows(
        Transceiver, ["model_id", "serial", "date_code", "status", "cage_id"], x_rows, **kw
    )
    del x_rows
    fids = bulk.bulk_insert_rows(
        Transceiver,
        ["model_id", "serial", "date_code", "status", "cage_id"],
        [r[:5] for r in failed_rows],
        **kw,
    )
    bulk.bulk_insert_rows(
        TransceiverPlacement,
        ["transceiver_id", "cage_id", "installed_at", "removed_at", "end_reason"],
        [[x, c, t, None, ""] for x, c, t in zip(xids, cages, installed, strict=True)]
        + [[f, r[5], r[6], r[7], PlacementEnd.FAILED] for f, r in zip(fids, failed_rows, strict=True)],
        **kw,
    )
    del installed

    # Links: port k of cage c on device 2j <-> the same on device 2j+1.
    per_dev = CAGES_PER_DEVICE * 2
    link_rows = []
    for j in range(0, len(ports) // per_dev - 1, 2):
        a0, b0 = j * per_dev, (j + 1) * per_dev
        for k in range(per_dev):
            link_rows.append([ports[a0 + k], ports[b0 + k], "400GBASE-DR4", "RS544", 400, 4, 106.25, 3.0])
    links = bulk.bulk_insert_rows(
        Link,
        ["a_port_id", "b_port_id", "pmd", "fec", "speed_gbps", "lanes", "lane_rate_gbaud", "loss_budget_db"],
        link_rows,
        **kw,
    )
    del link_rows
    sample = rng.sample(links, min(10_000, len(links)))
    cables = bulk.bulk_insert_rows(
        Cable,
        ["label", "kind", "status", "install_date"],
        [
            [f"BC{i:07d}", CableKind.SMF_OS2, CableStatus.IN_PRODUCTION, (now - timedelta(days=400)).date()]
            for i in range(len(sample))
        ],
        **kw,
    )
    bulk.bulk_insert_rows(
        LinkSegment,
        ["link_id", "seq", "cable_id"],
        [[lid, 0, c] for lid, c in zip(sample, cables, strict=True)],
        **kw,
    )
    bulk.bulk_insert_rows(
        CableTest,
        ["cable_id", "kind", "tested_at", "margin_db", "loss_db", "budget_db"],
        [
            [
                c,
                TestKind.OLTS,
                now - timedelta(days=rng.randint(1, 300)),
                round(rng.uniform(-0.5, 1.5), 2),
                1.0,
                1.5,
            ]
            for c in cables
        ],
        **kw,
    )
    bulk.bulk_insert_rows(
        Alert,
        ["rule", "severity", "state", "link_id", "opened_at", "updated_at", "resolved_at", "summary", "key"],
        [
            [
                rng.choice(["fec_degradation", "rx_power_drift", "link_flap"]),
                rng.choice([Severity.WARNING, Severity.NOTIFY, Severity.PAGE]),
                state,
                lid,
                now - timedelta(days=rng.randint(1, 200)),
                now,
                now if state == AlertState.RESOLVED else None,
                "bench",
                f"bench:{lid}",
            ]
            for lid, state in zip(
                rng.sample(links, min(5_000, len(links))),
                [rng.choice([AlertState.OPEN, AlertState.RESOLVED]) for _ in range(min(5_000, len(links)))],
                strict=True,
            )
        ],
        **kw,
    )
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    report("forecast.generate_fleet", time.perf_counter() - t0, "s", "informational")


def run(report) -> None:
    import django
    from django.db import connection, transaction

    if not django.apps.apps.ready:
        django.setup()
    from inventory.selectors import forecast as fsel
    from inventory.services import forecast as forecast_services

    pg = connection.vendor == "postgresql"
    n = int(os.environ.get("BENCH_FORECAST_N", 1_000_000 if pg else 100_000))
    name = "forecast.full_1m_transceivers" if n == 1_000_000 else f"forecast.full_{n}_transceivers"
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    try:
        with transaction.atomic():
            _build(n, now, report)
            t = time.perf_counter()
            fsel.cohort_data(now=now)
            report("forecast.cohort_aggregates", time.perf_counter() - t, "s", "informational")
            t = time.perf_counter()
            fsel.link_features(now=now)
            report("forecast.link_features", time.perf_counter() - t, "s", "informational")
            t = time.perf_counter()
            payload = forecast_services.forecast_compute(now=now)
            elapsed = time.perf_counter() - t
            report(name, elapsed, "s", f"< {TARGET_S:.0f} s" + ("" if pg else " (PostgreSQL, 1M)"))
            flagged = [r["cohort"] for r in payload["breakdowns"]["lot"] if r["flagged"]]
            report("forecast.installed_modules", payload["fleet"]["installed"], "modules", "informational")
            report("forecast.links_ranked", payload["risk"]["considered"], "links", "informational")
            report("forecast.flagged_lots", len(flagged), "lots", "the bad lot (BenchV0 2024-06)")
            raise _Rollback
    except _Rollback:
        pass


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    import django

    django.setup()

    def _print(name, value, unit, target):
        print(f"{name:40s} {value:12.3f} {unit:8s} target {target}")

    run(_print)
