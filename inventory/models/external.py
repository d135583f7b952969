from django.db import models


class ExternalRef(models.Model):
    """This object is that object in another system (a NetBox or Nautobot instance).

    Makes re-imports idempotent and lets a sync notice a cable that moved over there.
    """

    source = models.CharField(max_length=200, help_text="e.g. netbox:https://netbox.example.com")
    kind = models.CharField(max_length=30, help_text="site, rack, device, cage, port, module, cable, ...")
    external_id = models.BigIntegerField()
    object_id = models.BigIntegerField()
    seen_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source", "kind", "external_id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "kind", "external_id"], name="external_ref_unique"),
            models.UniqueConstraint(fields=["source", "kind", "object_id"], name="external_ref_unique_local"),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.kind} #{self.external_id} -> {self.object_id}"
