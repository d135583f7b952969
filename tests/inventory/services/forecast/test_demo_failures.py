"""The demo cluster's failure history: the failures `make run`'s hall shows, with their history and
a flagged bad lot, and the same failures from the same seed (each test seeds its own demo)."""

from datetime import UTC, datetime

import pytest

from inventory.models import Link, TransceiverPlacement
from inventory.services.demo.failures import BAD_VENDOR
from inventory.services.demo.seed import demo_seed
from inventory.services.forecast import snapshot as forecast_services


@pytest.fixture
def hall(db):
    # The size `make run` seeds: a lot is flagged only on enough of its own failures to stand out
    # among every lot that has any (a 64-GPU demo's bad lot of 20 modules, 6 failures, does not).
    return demo_seed(gpus=256, seed=3, as_of=datetime(2026, 11, 29, tzinfo=UTC).date())


def test_demo_has_failures_with_history_and_a_flagged_bad_lot(hall):
    demo = hall
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    assert demo.counts["failed_modules"] > 0
    failed = TransceiverPlacement.objects.filter(end_reason="failed")
    assert failed.count() == demo.counts["failed_modules"]
    # The change is in the history, with the reason.
    assert (
        TransceiverPlacement.history.filter(end_reason="failed", history_type="~").count() == failed.count()
    )
    p = forecast_services.forecast_compute(now=now)
    flagged = [r["cohort"] for r in p["breakdowns"]["lot"] if r["flagged"]]
    assert flagged and all(c.startswith(BAD_VENDOR) for c in flagged)
    vendors = {r["cohort"]: r for r in p["breakdowns"]["vendor"]}
    assert not vendors["NVIDIA"]["flagged"]
    assert p["risk"]["considered"] == Link.objects.filter(active=True).count()


def test_demo_failures_are_deterministic_by_seed(db):
    day = datetime(2026, 11, 29, tzinfo=UTC).date()
    a = demo_seed(gpus=64, seed=5, as_of=day).counts
    assert a["failed_modules"] == sum(1 for _ in TransceiverPlacement.objects.filter(end_reason="failed"))
    b = demo_seed(gpus=64, seed=5, as_of=day)
    assert b.skipped  # same seed, same site: nothing written twice
