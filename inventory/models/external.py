from django.db import models


class ExternalRef(models.Model):
    """This object is that object in another system (a NetBox or Nautobot instance).

    Makes re-imports idempotent and lets a sync notice a cable that moved over there.
    """

    source = models.CharField(
        max_length=200, help_text="e.g. netbox:https://netbox.example.com or nautobot:https://..."
    )
    kind = models.CharField(max_length=30, help_text="site, rack, device, cage, port, module, cable, ...")
    external_id = models.CharField(max_length=64, help_text="NetBox's integer id or Nautobot's UUID, as text")
    object_id = models.BigIntegerField()
    seen_at = models.DateTimeField(auto_now=True)
    attributes = models.JSONField(
        default=dict,
        blank=True,
        help_text="The source's own values kept verbatim and what they became here "
        '({"netbox": {...}, "here": {...}}), written back unchanged by exports',
    )

    class Meta:
        ordering = ["source", "kind", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "kind", "external_id"], name="external_ref_unique"),
            models.UniqueConstraint(fields=["source", "kind", "object_id"], name="external_ref_unique_local"),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.kind} #{self.external_id} -> {self.object_id}"


class SyncRun(models.Model):
    """One run of an import or sync from another system: what it did and what it refused."""

    source = models.CharField(max_length=200)
    site = models.CharField(max_length=100)
    dry_run = models.BooleanField(default=False)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    conflicts = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.source} {self.site} {self.started_at:%Y-%m-%d %H:%M}"
