from django.db import migrations

# The desk cable list sorts a nullable column with its blanks last in both directions
# (``selectors.pages.lists._ordering``: no retest date, no install date, no length). Ascending,
# that is PostgreSQL's default (``ASC NULLS LAST``) and the 0014/0016 indexes serve it forwards;
# descending, walking them backwards gives ``DESC NULLS FIRST``, so ``DESC NULLS LAST`` needs its
# own index, here written as the ORDER BY it serves. PostgreSQL only: SQLite accepts no NULLS
# clause in an index, and scans at its sizes anyway.
SORTS = [
    ("length", "length_m"),
    ("installed", "install_date"),
    ("retest", "retest_due"),
]


def _indexes():
    for name, column in SORTS:
        yield f"cable_{name}_id_desc", f"{column} DESC NULLS LAST, id DESC"
        yield f"cable_site_{name}_desc", f"site_id DESC, {column} DESC NULLS LAST, id DESC"


def descending_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, columns in _indexes():
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON inventory_cable ({columns})")


def drop_descending_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for name, _ in _indexes():
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0033_fieldnote_notice_delivery"),
    ]

    operations = [migrations.RunPython(descending_indexes, drop_descending_indexes)]
