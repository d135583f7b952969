"""The rollup queue's port lists compressed with lz4 instead of pglz, where the server has it.

Each ingest batch writes one ``TelemetryIngestBatch`` row per rollup shard, with the batch's
port ids as a ``bigint[]`` of some 2,500 elements (20 kB): TOASTed and compressed. PostgreSQL's
default compressor, pglz, took 1.1 ms for such a row (2,000 rows: 2.23 s) against 0.17 ms with
lz4 (0.34 s; no compression at all: 0.36 s), in the COPY backend of every ingest request: about
0.37 µs of a sample's 8 µs there, and 5 % of those backends' CPU in a profile of the 4,096-GPU
sustained benchmark (``perf``, 2026-12-06). The rows are deleted once rolled up, so lz4's
larger values (48 MB against 33 MB for those 2,000 rows) cost nothing lasting. A server built
without lz4 keeps pglz.
"""

from django.db import migrations


def _compression(method: str):
    def run(apps, schema_editor):
        conn = schema_editor.connection
        if conn.vendor != "postgresql":
            return
        with conn.cursor() as cur:
            cur.execute(
                "SELECT %s = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'", [method]
            )
            row = cur.fetchone()
        if not (row and row[0]):
            return
        table = schema_editor.quote_name(apps.get_model("inventory", "TelemetryIngestBatch")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN port_ids SET COMPRESSION {method}")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0034_cable_sorts_blanks_last"),
    ]

    operations = [
        migrations.RunPython(_compression("lz4"), _compression("pglz")),
    ]
