"""A bulk load written on a writer thread beside its Python (``inventory.db.pipeline``) leaves
the same database as one written in turn: reads inside see every row handed over before them,
a failed write fails the block, and nothing of a failed block is kept."""

import time

import pytest
from django.db import IntegrityError, connection, transaction

from inventory.db import bulk, pipeline
from inventory.models import Cable, Vendor

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]  # SQLite runs the block as is


def _slow_start(cur) -> None:
    """A write that takes a while to come round to (the server busy with an earlier COPY)."""
    time.sleep(0.3)


def _vendors(prefix: str, n: int) -> list[list[str]]:
    return [[f"{prefix}{i}", f"{prefix.lower()}{i}"] for i in range(n)]


def test_a_read_inside_the_block_sees_every_row_handed_over_before_it():
    with transaction.atomic(), pipeline.writes_in_background():
        pipeline.submit(_slow_start)
        ids = bulk.bulk_insert_rows(Vendor, ["name", "slug"], _vendors("V", 50))
        assert len(ids) == 50  # the ids come at once, before the rows are written
        assert Vendor.objects.count() == 50
        assert Vendor.history.count() == 50
        assert sorted(Vendor.objects.values_list("pk", flat=True)) == sorted(ids)


def _load_with_a_taken_name() -> None:
    with transaction.atomic(), pipeline.writes_in_background():
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], _vendors("V", 3))
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], [["V1", "again"]])  # the name is taken
        bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [["C1", "CAT6A", "planned"]])


def _load_refused_half_way() -> None:
    with transaction.atomic(), pipeline.writes_in_background():
        pipeline.submit(_slow_start)
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], _vendors("V", 3))
        raise ValueError("plan refused")


def test_a_write_that_fails_on_the_writer_thread_fails_the_block_and_nothing_is_kept():
    with pytest.raises(IntegrityError):
        _load_with_a_taken_name()
    assert not Vendor.objects.exists()
    assert not Cable.objects.exists()


def test_an_error_in_the_block_itself_drops_the_writes_still_queued():
    with pytest.raises(ValueError, match="plan refused"):
        _load_refused_half_way()
    assert not Vendor.objects.exists()
    with connection.cursor() as cur:  # the connection is usable again, nothing left running on it
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)


def _load_that_goes_on_after_a_failure(steps: list[str]) -> None:
    with transaction.atomic(), pipeline.writes_in_background():
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], _vendors("V", 3))
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], [["V1", "again"]])  # the name is taken
        try:
            Vendor.objects.count()
        except IntegrityError:
            steps.append("read refused")
        steps.append("next write")
        bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [["C1", "CAT6A", "planned"]])
        steps.append("next write taken")


def test_a_write_after_a_caught_failure_is_refused_not_dropped():
    steps: list[str] = []
    with pytest.raises(IntegrityError):
        _load_that_goes_on_after_a_failure(steps)
    assert steps == ["read refused", "next write"]
    assert not Cable.objects.exists()


def test_indexes_of_a_finished_table_are_built_before_the_block_ends_and_all_come_back():
    def indexes(table):
        with connection.cursor() as cur:
            cur.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s", [table])
            return {r[0] for r in cur.fetchall()}

    before = indexes("inventory_vendor") | indexes("inventory_cable")
    models_ = [Vendor, Cable]
    fks, idx = bulk.foreign_keys_checked_at_end(models_), bulk.indexes_built_at_end(models_)
    with transaction.atomic(), fks, idx as built_now, pipeline.writes_in_background():
        bulk.bulk_insert_rows(Vendor, ["name", "slug"], _vendors("V", 5))
        built_now(Vendor)
        bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [["C1", "CAT6A", "planned"]])
        assert "inventory_vendor_name_key" in indexes("inventory_vendor")  # built, after its rows
        assert "inventory_cable_label_trgm" not in indexes("inventory_cable")  # still at the end
    assert indexes("inventory_vendor") | indexes("inventory_cable") == before
    assert Vendor.objects.count() == 5 and Cable.objects.count() == 1


def test_outside_the_block_a_write_runs_at_once():
    assert not pipeline.active()
    bulk.bulk_insert_rows(Vendor, ["name", "slug"], _vendors("V", 2))
    assert Vendor.objects.count() == 2
