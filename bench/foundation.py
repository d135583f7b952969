"""Foundation figures: cable-plan import rate, cable list/detail latency, trace latency, web memory."""

from __future__ import annotations

import random
import time

from bench.common import Http, MachineCpu, WebServer, make_token, percentile


def _import_ports(n: int) -> tuple[list[str], list[str]]:
    """Two fresh patch-field devices with ``n`` free RJ45 ports each, written in bulk."""
    from django.db import transaction

    from tests import factories as f

    with transaction.atomic():
        f.free_port_devices(["bench-imp-a", "bench-imp-b"], n)
    names = [f"p{i}" for i in range(n)]
    return names, names


def run(report) -> None:
    from django.db import connection

    from inventory.models import Cable, Port
    from inventory.selectors.paging import COUNT_CAP
    from inventory.selectors.plant.trace import port_trace

    token = make_token()
    total, batch = 20_000, 5_000
    a_names, b_names = _import_ports(total)
    header = "label,kind,a_device,a_port,b_device,b_port,length_m,install_date\n"

    with WebServer() as web:
        http = Http(web.port, token)
        took = 0.0
        bodies = [
            header
            + "".join(
                f"IMP-{i:06d},CAT6A,bench-imp-a,{a_names[i]},bench-imp-b,{b_names[i]},3,2026-11-01\n"
                for i in range(start, start + batch)
            )
            for start in range(0, total, batch)
        ]
        with MachineCpu(connection.settings_dict["NAME"]) as machine:
            for body in bodies:
                status, data, ms = http.request(
                    "POST", "/api/cables/import/?dry_run=0", body.encode(), {"Content-Type": "text/csv"}
                )
                assert status == 201, data[:500]
                took += ms / 1000
        report("cable-plan import through the API (batches of 5,000)", total / took, "cables/s", ">= 5,000")
        # On a shared machine the rate above is what other people's work left over. One import
        # is a serial chain (the web worker and its backend take turns): the cables per CPU-second
        # of that chain are the rate it would reach with a core to itself and a client elsewhere
        # (CPU time itself grows on a busy machine, so this understates a quiet one).
        chain = machine.ours("web (gunicorn)", "PostgreSQL backends, this database")
        print(machine.table(total, "cable"), flush=True)
        report(
            "cable-plan import: CPU of the web worker and its backend per cable", 1e6 * chain / total, "µs"
        )
        report("cable-plan import: cables per CPU-second of that chain", total / chain, "cables/s")

        labels = list(Cable.objects.filter(label__startswith="C").values_list("label", flat=True))
        count = len(labels)
        rng = random.Random(7)
        for size, target in ((50, "<= 40 ms"), (1000, "<= 400 ms")):
            # Numbered pages stop at the count's cap; deeper pages go by keyset (?after=), the way
            # the `next` links walk a large list: both kinds, anywhere in the table.
            pages = max(1, min(count, COUNT_CAP) // size)
            paths = [
                f"/api/cables/?page_size={size}&page={rng.randint(1, pages)}"
                for _ in range(20 if size == 50 else 8)
            ]
            paths += [
                f"/api/cables/?page_size={size}&after={rng.choice(labels)}"
                for _ in range(20 if size == 50 else 7)
            ]
            times = []
            for path in paths:
                status, _, ms = http.request("GET", path)
                assert status == 200, path
                times.append(ms)
            report(f"API cable list, page of {size}: p50", percentile(times, 50), "ms")
            report(f"API cable list, page of {size}: p95", percentile(times, 95), "ms", target)
        times = []
        for label in rng.sample(labels, 100):
            status, _, ms = http.request("GET", f"/api/cables/{label}/")
            assert status == 200
            times.append(ms)
        report("API cable detail: p50", percentile(times, 50), "ms")
        report("API cable detail: p95", percentile(times, 95), "ms", "<= 20 ms")

        # Leaf uplinks run leaf -> jumper -> panel -> trunk -> panel -> jumper -> spine.
        uplinks = list(
            Port.objects.filter(device__name__startswith="leaf-", cage__index__gt=16).select_related(
                "device__rack"
            )[:2000]
        )
        sample = rng.sample(uplinks, min(200, len(uplinks)))
        times = []
        for p in sample:
            t = time.perf_counter()
            tr = port_trace(p)
            times.append((time.perf_counter() - t) * 1000)
            assert tr.complete and len(tr.segments) == 3
        report("path trace through two panels (service): p50", percentile(times, 50), "ms")
        report("path trace through two panels (service): p95", percentile(times, 95), "ms", "<= 10 ms")
        times = []
        for p in sample[:100]:
            status, _, ms = http.request("GET", f"/api/ports/{p.pk}/trace/")
            assert status == 200
            times.append(ms)
        report("path trace through two panels (API): p95", percentile(times, 95), "ms")
        report("web process peak memory (RSS)", web.peak_rss_mb(), "MB", "< 250 MB")
