"""Search's trigram indexes keep few entries waiting to be merged, whatever was written (PostgreSQL)."""

import pytest
from django.db import connection

from inventory.db import bulk
from inventory.models import Cable

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def _pending_kb(index: str) -> int:
    with connection.cursor() as cur:
        cur.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        cur.execute("SELECT pending_pages FROM pgstatginindex(%s::regclass)", [index])
        return cur.fetchone()[0] * 8


def test_a_large_write_leaves_at_most_256_kb_for_every_search_to_read():
    """A GIN index's pending list is read whole by every search (``?q=``) until it is merged; at
    the default 4 MB, ``?q=C0012`` took 13-18 ms instead of under 1 ms at 131,072 GPUs."""
    rows = [[f"PENDING-{i:07d}-LIST", "CAT6A", "planned"] for i in range(60_000)]
    bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], rows, history=False)
    assert 0 < _pending_kb("inventory_cable_label_trgm") <= 256 + 8
