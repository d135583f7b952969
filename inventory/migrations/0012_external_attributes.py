from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0011_poison_set_aside"),
    ]

    operations = [
        migrations.AddField(
            model_name="externalref",
            name="attributes",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text="The source's own values kept verbatim and what they became here "
                '({"netbox": {...}, "here": {...}}), written back unchanged by exports',
            ),
        ),
    ]
