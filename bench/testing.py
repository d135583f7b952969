"""Test-result figures: SOR upload-parse-store rate, and verdicts for every link of the seeded
cluster (TIA per segment, PMD per channel, the production gate), set-based.

Run with the others (``make bench``) or alone: ``python -m bench testing`` (seeds a fresh
4,096-GPU cluster first); ``python bench/testing.py`` does the same.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = 300


def _sor_samples() -> list[tuple[str, bytes]]:
    """Real v2 files from tests/data/sor plus synthetic v1 files: a realistic mix."""
    import sys

    sys.path.insert(0, str(ROOT))
    from tests.sor_builder import build_v1

    real = [(p.name, p.read_bytes()) for p in sorted((ROOT / "tests" / "data" / "sor").glob("*.sor"))]
    return real + [(f"synthetic-{i}.sor", build_v1(total_loss_db=0.3 + i / 100)) for i in range(2)]


def run(report) -> None:
    from django.conf import settings
    from django.test import override_settings

    from inventory.core.choices import CableKind, CableStatus
    from inventory.models import Cable, Link
    from inventory.selectors.testing.results import commissioning_report, link_verdicts
    from inventory.services import testing as svc

    samples = _sor_samples()
    cables = list(
        Cable.objects.filter(kind=CableKind.SMF_OS2)
        .exclude(status=CableStatus.RETIRED)
        .order_by("pk")[:FILES]
    )
    with tempfile.TemporaryDirectory() as media, override_settings(MEDIA_ROOT=media):
        settings.MEDIA_ROOT = media
        t = time.perf_counter()
        for i, cable in enumerate(cables):
            name, data = samples[i % len(samples)]
            svc.cable_test_upload_otdr(cable=cable, files=[svc.SorUpload(name, data, fibre=1)])
        elapsed = time.perf_counter() - t
    report("SOR upload-parse-store (files/s)", len(cables) / elapsed, "files/s", ">= 200")

    links = list(
        Link.objects.filter(active=True).only("pk", "a_port_id", "b_port_id", "pmd", "loss_budget_db")
    )
    t = time.perf_counter()
    verdicts = link_verdicts(links=links)
    elapsed = time.perf_counter() - t
    assert len(verdicts) == len(links)
    report(f"verdicts for every link ({len(links):,} links)", elapsed, "s", "< 2 s")

    t = time.perf_counter()
    rep = commissioning_report()
    report(
        f"commissioning report, whole cluster ({rep.counts['links']:,} links)",
        time.perf_counter() - t,
        "s",
        "",
    )


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    from bench.__main__ import main

    sys.exit(main(["testing"]))
