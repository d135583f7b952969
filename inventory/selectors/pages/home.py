"""The home page: plant counts and the latest field faults."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Cable, FieldNote


def dashboard() -> dict:
    today = timezone.localdate()
    counts = Cable.objects.aggregate(
        total=Count("pk", filter=~Q(status=CableStatus.RETIRED)),
        overdue=Count("pk", filter=Q(retest_due__lt=today) & ~Q(status=CableStatus.RETIRED)),
        degraded=Count("pk", filter=Q(status=CableStatus.DEGRADED)),
        faulty=Count("pk", filter=Q(status=CableStatus.FAULTY)),
    )
    faults = list(
        FieldNote.objects.filter(kind="fault").select_related("cable", "actor").order_by("-at", "-id")[:10]
    )
    return {"counts": counts, "recent_faults": faults}
