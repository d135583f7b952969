from django.db import migrations

# Search by name (the search page: racks, devices by name, serial or asset tag, ports by name or
# alias) had no index that serves ``UPPER(col) LIKE '%q%'`` (0014 indexed the cable and module
# columns only). At 131,072 GPUs ``/search/?q=C0001`` took 2.2 s: 1.33 s scanning 909,312 ports
# and 1.17 million aliases, 63 ms the 36,864 devices. The same trigram GIN indexes as 0014, with
# 0017's pending-list cap (a search reads the pending list whole). Port and alias names repeat
# (eth0, Ethernet1/1), so these are small: 12 and 15 MB beside the port table's 105 MB.
TRIGRAM = [
    ("inventory_port", "name"),
    ("inventory_portalias", "name"),
    ("inventory_device", "name"),
    ("inventory_device", "serial"),
    ("inventory_device", "asset_tag"),
    ("inventory_rack", "name"),
]
LIMIT_KB = 256


def trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for table, column in TRIGRAM:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_{column}_trgm ON {table} "
            f"USING gin (UPPER({column}) gin_trgm_ops) WITH (gin_pending_list_limit = {LIMIT_KB})"
        )


def drop_trigram_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, column in TRIGRAM:
        schema_editor.execute(f"DROP INDEX IF EXISTS {table}_{column}_trgm")


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0031_telemetry_state_updates_in_place"),
    ]

    operations = [migrations.RunPython(trigram_indexes, drop_trigram_indexes)]
