"""PortRollup without an index on ``hist_layout_id``.

The rollup rewrites a bucket each time a run sees new samples of it (a partial bucket, then the
whole one), and each rewrite put a new entry into every index of the table. Nothing reads rollups
by layout, and layouts are never deleted (``TelemetryHistogram.layout`` has no index either), so
that index only cost writes and disk. A fill factor below 100, which would let PostgreSQL keep
a rewritten row beside the old one without touching any index, was not taken: the table is the
site's largest (a row per port per minute for a year), and only its newest buckets are ever
rewritten, so the free fifth of every page would be paid for by every row kept.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0029_repair_source_watch_words_drain_overdue"),
    ]

    operations = [
        migrations.AlterField(
            model_name="portrollup",
            name="hist_layout",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="inventory.fecbinlayout",
            ),
        ),
    ]
