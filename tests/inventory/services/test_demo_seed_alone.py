"""Demo seeds that a test makes for itself: what the seed leaves behind once it commits, and a demo
too small for what the 64-GPU demo of ``test_demo_hall`` and ``test_demo_job`` shows (those modules
share one seed among their tests, ``tests/seeded.py``, which a second seed in them would stack on)."""

from datetime import date

import pytest
from django.db import connection

from inventory.core.choices import AlertRule
from inventory.models import Alert
from inventory.services.demo.seed import demo_seed

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 11, 29)


@pytest.mark.postgres  # planner statistics are PostgreSQL's
def test_the_seed_leaves_statistics_for_the_history_the_cable_page_reads(django_capture_on_commit_callbacks):
    """Without them the planner expected 2,000 history rows per cable at 131,072 GPUs and started
    parallel workers for each of the cable page's two history reads (8-9 ms each, not 0.1)."""
    with django_capture_on_commit_callbacks(execute=True):
        demo_seed(gpus=64, seed=5, as_of=AS_OF)
    with connection.cursor() as cur:
        cur.execute(
            "SELECT DISTINCT tablename FROM pg_stats WHERE tablename = ANY(%s)",
            [["inventory_historicalcable", "inventory_historicalcableend", "inventory_cable"]],
        )
        analyzed = {r[0] for r in cur.fetchall()}
    assert analyzed == {"inventory_historicalcable", "inventory_historicalcableend", "inventory_cable"}


def test_a_demo_too_small_for_the_job_has_none(db):
    report = demo_seed(gpus=16, seed=5, as_of=AS_OF)
    assert report.counts["jobs"] == 0
    assert not Alert.objects.filter(rule=AlertRule.TAIL_LATENCY_SPIKE).exists()
