from django.db import migrations

# The trigram indexes of search (0014) are GIN indexes: new entries (every insert, and every
# update that is not HOT: a retest recompute rewrites 136,000 cables) wait in a pending list
# that every search reads whole, up to 4 MB by default before the writer merges it. At
# 131,072 GPUs, after the retests bench, serial_a's held 97,611 entries (2.7 MB) and
# ``?q=C0012`` took 13-18 ms instead of under 1 ms. Capped at 256 kB, a search reads at most
# 32 pages of it; writers merge sixteen times as often, in smaller steps (the same total work).
TRIGRAM_INDEXES = [
    "inventory_cable_label_trgm",
    "inventory_cable_serial_a_trgm",
    "inventory_cable_serial_b_trgm",
    "inventory_cableend_label_trgm",
    "inventory_transceiver_serial_trgm",
]
LIMIT_KB = 256


def cap(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for index in TRIGRAM_INDEXES:
        schema_editor.execute(f"ALTER INDEX IF EXISTS {index} SET (gin_pending_list_limit = {LIMIT_KB})")


def uncap(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for index in TRIGRAM_INDEXES:
        schema_editor.execute(f"ALTER INDEX IF EXISTS {index} RESET (gin_pending_list_limit)")


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0016_cable_site"),
    ]

    operations = [migrations.RunPython(cap, uncap)]
