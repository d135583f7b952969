"""A bulk write of user input whose foreign keys PostgreSQL does not check row by row
(``bulk.keys_checked_at_end``) keeps what the per-row checks guarantee: a row named that does not
exist fails the write, and a row named cannot be deleted before the writer commits."""

import psycopg
import pytest
from django.db import IntegrityError, connection, transaction

from inventory.db import bulk
from inventory.models import Cable, CableEnd, Port, Vendor
from tests import factories as f

pytestmark = pytest.mark.postgres  # SQLite (and a role without the right) runs the block as is


def _end(cable_id: int, port_id: int) -> list:
    return [cable_id, "A", 0, "", "RJ45", None, None, "", None, None, port_id, True]


END_COLUMNS = [
    "cable_id",
    "side",
    "leg",
    "label",
    "connector_type",
    "fibre_count",
    "pinned",
    "polish",
    "cage_id",
    "connector",
    "port_id",
    "active",
]


def _write_cable(label: str, port_id: int) -> None:
    """A cable with one end on ``port_id``, inside the block, in its own transaction."""
    with transaction.atomic(), bulk.keys_checked_at_end(Cable, CableEnd):
        (cid,) = bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], [[label, "CAT6A", "planned"]])
        bulk.bulk_insert_rows(CableEnd, END_COLUMNS, [_end(cid, port_id)])


def _orm_write_inside() -> None:
    with transaction.atomic(), bulk.keys_checked_at_end(Vendor):
        Vendor.objects.create(name="Corning", slug="corning")


def _delete_port(conn, port_id: int) -> None:
    with conn.transaction():
        conn.execute("DELETE FROM inventory_portalias WHERE port_id = %s", [port_id])
        conn.execute("DELETE FROM inventory_port WHERE id = %s", [port_id])


@pytest.mark.django_db
def test_a_write_naming_a_port_that_does_not_exist_fails_and_writes_nothing():
    with pytest.raises(IntegrityError, match="inventory_port.id = 987654321"):
        _write_cable("K-1", 987654321)
    assert not Cable.objects.filter(label="K-1").exists()
    assert not CableEnd.objects.exists()


@pytest.mark.django_db
def test_inside_the_block_an_ordinary_write_is_refused():
    with pytest.raises(RuntimeError, match="only bulk_insert_rows"):
        _orm_write_inside()
    assert not Vendor.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_port_the_write_names_cannot_be_deleted_until_it_commits():
    (device,) = f.free_port_devices(["keys-a"], 1)
    port = Port.objects.get(device=device)
    settings = connection.settings_dict
    other = psycopg.connect(
        dbname=settings["NAME"],
        user=settings["USER"] or "postgres",
        host=settings["HOST"] or "127.0.0.1",
        port=str(settings["PORT"] or 5432),
        autocommit=True,
    )
    try:
        other.execute("SET lock_timeout = '200ms'")
        with transaction.atomic():
            _write_cable("K-2", port.pk)
            # not committed yet: the delete waits for the writer's lock on the port
            with pytest.raises(psycopg.errors.LockNotAvailable):
                _delete_port(other, port.pk)
        # committed: the delete now fails on the cable end that names the port
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            _delete_port(other, port.pk)
    finally:
        other.close()
    assert CableEnd.objects.get(cable__label="K-2").port_id == port.pk
