"""Label rendering rate: a 1,000-label batch to PDF (target >= 1,000 labels/s).

Labels come from the seeded cluster when the database has one (the runner seeds 4,096 GPUs),
else from synthetic facts of the same shape. Each figure is the best of three runs (the
machine is shared); the CPU-time figure is printed too, as it does not move with the load.
"""

from __future__ import annotations

import time
from datetime import date

N = 1000


def _synthetic(n: int):
    from inventory.core.labels import CableLabel, EndInfo
    from inventory.core.links import cable_url

    out = []
    for i in range(n // 2):
        a = EndInfo(f"S{i % 16:02d}-G{i % 8 + 1:02d}", 2 + i % 40, f"gpu-{i:04d}", f"eth{i % 8}")
        b = EndInfo(
            f"S{i % 16:02d}-N01",
            1 + i % 4,
            f"leaf-s{i % 16:02d}-r{i % 8}",
            f"Ethernet{i % 32 + 1}/{i % 2 + 1}",
        )
        for end in "AB":
            url = cable_url(f"C{i:06d}", base_url="https://cabletrack.example.com")
            out.append(
                CableLabel(f"C{i:06d}", url, end, a, b, date(2025, 3, 1), "OLTS PASS", date(2025, 3, 2))
            )
    return out


def _labels(n: int):
    from django.conf import settings
    from django.db import DatabaseError

    from inventory.models import Cable
    from inventory.selectors.labels.facts import cable_label_facts

    try:
        ids = list(Cable.objects.order_by("label").values_list("pk", flat=True)[: n // 2 + 50])
        labels = cable_label_facts(cable_ids=ids, base_url=settings.CABLETRACK_BASE_URL)
    except DatabaseError:
        labels = []
    if len(labels) >= n:
        return labels[:n], ids
    return _synthetic(n), []


def _best(fn, runs: int = 3) -> tuple[float, float]:
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def run(report) -> None:
    from inventory.core.labels import STOCKS, render_pdf, render_zpl

    labels, ids = _labels(N)
    for key in ("flag", "a4"):
        wall, cpu = _best(lambda key=key: render_pdf(labels, STOCKS[key]))
        report(f"labels_pdf_{key}_rate", N / wall, "labels/s", ">= 1000 (1,000-label batch)")
        report(f"labels_pdf_{key}_rate_cpu", N / cpu, "labels/cpu-s", "info")
    wall, _ = _best(lambda: render_zpl(labels, STOCKS["flag"]))
    report("labels_zpl_flag_rate", N / wall, "labels/s", "info")
    if ids:
        from django.conf import settings

        from inventory.selectors.labels.facts import cable_label_facts

        wall, _ = _best(lambda: cable_label_facts(cable_ids=ids, base_url=settings.CABLETRACK_BASE_URL))
        report("labels_facts_rate", len(ids) / wall, "cables/s", "info (selector, set-based)")


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
    django.setup()
    run(lambda name, value, unit, target: print(f"{name:32s} {value:12.1f} {unit:14s} target {target}"))
