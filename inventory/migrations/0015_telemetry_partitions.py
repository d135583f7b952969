"""Raw telemetry partitioned by day on PostgreSQL (``services/telemetry/partitions.py``).

The three raw tables become ``PARTITION BY RANGE (ts)`` tables keyed as before (port, ts),
with one partition per UTC day that holds rows and a default partition for the rest (times
before 2000 or after 2100, 'infinity'); every row is copied across, then the old table goes.
Django's state does not change (partitioning is invisible to the ORM); SQLite keeps plain
tables. The port-only b-trees that migration 0008 meant to drop (the key serves port lookups)
are not carried over.

Reversible: ``unpartition`` copies the rows back into plain tables.
"""

from django.db import migrations

TABLES = ("inventory_telemetrysample", "inventory_telemetrylanesample", "inventory_telemetryhistogram")


def partition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    ex = schema_editor.execute
    with schema_editor.connection.cursor() as cur:
        for t in TABLES:
            ex(f"ALTER TABLE {t} RENAME TO {t}_plain")
            ex(f"ALTER INDEX {t}_pkey RENAME TO {t}_plain_pkey")
            ex(
                f"CREATE TABLE {t} (LIKE {t}_plain INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE) "
                "PARTITION BY RANGE (ts)"
            )
            ex(f"ALTER TABLE {t} ADD CONSTRAINT {t}_pkey PRIMARY KEY (port_id, ts)")
            ex(f"CREATE TABLE {t}_pdefault PARTITION OF {t} DEFAULT")
            cur.execute(
                f"SELECT DISTINCT (ts AT TIME ZONE 'UTC')::date FROM {t}_plain "  # noqa: S608 - fixed table names
                "WHERE ts >= '2000-01-01 00:00:00+00' AND ts < '2100-01-01 00:00:00+00' ORDER BY 1"
            )
            for (day,) in cur.fetchall():
                ex(
                    f"CREATE TABLE {t}_p{day:%Y%m%d} PARTITION OF {t} FOR VALUES "
                    f"FROM ('{day.isoformat()} 00:00:00+00') TO ('{day.isoformat()} 00:00:00+00'::timestamptz + interval '1 day')"
                )
            ex(f"INSERT INTO {t} SELECT * FROM {t}_plain")  # noqa: S608 - fixed table names
            ex(f"DROP TABLE {t}_plain")


def unpartition(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    ex = schema_editor.execute
    for t in TABLES:
        ex(f"ALTER TABLE {t} RENAME TO {t}_parts")
        ex(f"ALTER INDEX {t}_pkey RENAME TO {t}_parts_pkey")
        ex(f"CREATE TABLE {t} (LIKE {t}_parts INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)")
        ex(f"ALTER TABLE {t} ADD CONSTRAINT {t}_pkey PRIMARY KEY (port_id, ts)")
        ex(f"INSERT INTO {t} SELECT * FROM {t}_parts")  # noqa: S608 - fixed table names
        ex(f"DROP TABLE {t}_parts")


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0014_list_indexes"),
    ]

    operations = [migrations.RunPython(partition, unpartition, elidable=False)]
