"""The bulk load's shortcuts leave the database as an ordinary write would: every index and
unique constraint back at the end (and checked), every row with its history row."""

import pytest
from django.db import IntegrityError, connection, transaction

from inventory.db import bulk
from inventory.models import Cable, Vendor

pytestmark = pytest.mark.django_db


def _indexes(*tables: str) -> dict[str, str]:
    with connection.cursor() as cur:
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s)", [list(tables)])
        return dict(cur.fetchall())


TABLES = ("inventory_cable", "inventory_historicalcable", "inventory_vendor", "inventory_historicalvendor")


def _load(models_):
    """The seed's nesting: per-row foreign-key checks off (one anti-join per key at the end)."""
    return bulk.foreign_keys_checked_at_end(models_), bulk.indexes_built_at_end(models_)


@pytest.mark.postgres  # index building is PostgreSQL's (SQLite runs the block as is)
def test_a_load_into_empty_tables_runs_without_their_secondary_indexes_and_gets_them_all_back():
    before = _indexes(*TABLES)
    fks, indexes = _load([Cable, Vendor])
    with transaction.atomic(), fks, indexes:
        during = _indexes(*TABLES)
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], [["Corning", "corning"], ["Panduit", "panduit"]])
        bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [["C1", "CAT6A", "planned"]])
    assert "inventory_cable_label_trgm" in before and "inventory_cable_label_trgm" not in during
    assert "inventory_vendor_name_key" not in during  # a unique constraint no foreign key uses
    assert "inventory_historicalvendor_pkey" not in during  # a primary key no foreign key names
    assert "inventory_cable_pkey" in during and "inventory_vendor_pkey" in during  # named by keys
    assert _indexes(*TABLES) == before
    assert Vendor.objects.count() == 2 and Vendor.history.count() == 2


@pytest.mark.postgres
def test_a_duplicate_loaded_without_the_unique_constraint_fails_when_it_comes_back():
    fks, indexes = _load([Vendor])
    with pytest.raises(IntegrityError), transaction.atomic(), fks, indexes:
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], [["Corning", "corning"], ["Corning", "corning-2"]])
    assert not Vendor.objects.exists()
    assert "inventory_vendor_name_key" in _indexes("inventory_vendor")


@pytest.mark.postgres
def test_a_table_that_already_holds_rows_keeps_its_indexes():
    bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [["C1", "CAT6A", "planned"]])
    before = _indexes("inventory_cable")
    fks, indexes = _load([Cable])
    with transaction.atomic(), fks, indexes:
        assert _indexes("inventory_cable") == before


@pytest.mark.postgres
def test_where_foreign_keys_are_checked_row_by_row_the_indexes_stay():
    """PostgreSQL builds no index on a table with queued foreign-key checks: the block keeps them."""
    before = _indexes(*TABLES)
    with transaction.atomic(), bulk.indexes_built_at_end([Cable, Vendor]):
        assert _indexes(*TABLES) == before
        bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [["C1", "CAT6A", "planned"]])
    assert Cable.objects.count() == 1


def test_history_rows_are_written_whether_the_new_ids_run_unbroken_or_not(monkeypatch):
    """Ids drawn while another session draws from the same sequence interleave with its rows:
    the history rows are then selected by id list instead of by range, and none is missed or
    taken twice."""
    bulk.bulk_insert_rows(Vendor, ["name", "slug"], [[f"V{i}", f"v{i}"] for i in range(3)])  # unbroken
    allocate, held = bulk.allocate_ids, []

    def interleaved(model, n):  # the first batch takes every other id, the second the ones between
        if model is not Vendor:
            return allocate(model, n)
        if held:
            return [held.pop(0) for _ in range(n)]
        ids = allocate(model, 2 * n)
        held.extend(ids[1::2])
        return ids[::2]

    monkeypatch.setattr(bulk, "allocate_ids", interleaved)
    first = bulk.bulk_insert_rows(Vendor, ["name", "slug"], [[f"A{i}", f"a{i}"] for i in range(4)])
    second = bulk.bulk_insert_rows(Vendor, ["name", "slug"], [[f"B{i}", f"b{i}"] for i in range(3)])
    assert first[0] < second[0] < first[1]
    history = sorted(Vendor.history.values_list("id", flat=True))
    assert len(history) == 10 and history == sorted(Vendor.objects.values_list("pk", flat=True))
