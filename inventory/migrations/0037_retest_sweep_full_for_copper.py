"""Out-of-band copper (Cat6A) no longer has a retest due date (``core.retest_rules.retested``).

The daily sweep is incremental: it recomputes only the cables that changed since its last run,
so the dates Cat6A cables already carry would stay (overdue, reminded, escalated) until someone
ran a full sweep. Forgetting the runs' watermarks makes the next sweep a full one, which clears
them with their history ("retest due recomputed"). Nothing to undo: a full sweep is always safe.
"""

from django.db import migrations


def next_sweep_full(apps, schema_editor):
    RetestSweepRun = apps.get_model("inventory", "RetestSweepRun")
    RetestSweepRun.objects.filter(watermark__isnull=False).update(watermark=None)


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0036_repair_cable_end"),
    ]

    operations = [
        migrations.RunPython(next_sweep_full, migrations.RunPython.noop),
    ]
