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


def test_every_search_index_caps_its_pending_list():
    """Each trigram index (cables and modules, 0014 and 0017; racks, devices, ports and aliases,
    0032) keeps the same 256 kB cap: a search reads the pending list whole."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_indexes i ON i.indexname = c.relname"
            " WHERE i.indexdef LIKE '%%gin_trgm_ops%%'"
        )
        options = dict(cur.fetchall())
    assert {"inventory_port_name_trgm", "inventory_portalias_name_trgm", "inventory_device_name_trgm"} <= set(
        options
    )
    assert len(options) == 11
    assert {name: opts for name, opts in options.items() if opts != ["gin_pending_list_limit=256"]} == {}
