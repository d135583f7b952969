"""The home page: plant counts and the latest field faults."""

from __future__ import annotations

from urllib.parse import urlencode

from django.db.models import Count, Q
from django.utils import timezone

from inventory.core.choices import CURRENT_CABLE_STATUSES, CableStatus
from inventory.models import Cable, FieldNote
from inventory.selectors.retests.overdue import retest_overdue


def dashboard() -> dict:
    """The plant's counts, each the count of the cable list its tile links to: ``total`` (the
    cables of the plant, every status but retired: ``total_query``), ``in_production``,
    ``degraded`` and ``faulty`` (that status), ``overdue`` (retest overdue)."""
    today = timezone.localdate()
    counts = Cable.objects.aggregate(
        total=Count("pk", filter=Q(status__in=CURRENT_CABLE_STATUSES)),
        in_production=Count("pk", filter=Q(status=CableStatus.IN_PRODUCTION)),
        overdue=Count("pk", filter=retest_overdue(today)),
        degraded=Count("pk", filter=Q(status=CableStatus.DEGRADED)),
        faulty=Count("pk", filter=Q(status=CableStatus.FAULTY)),
    )
    faults = list(
        FieldNote.objects.filter(kind="fault").select_related("cable", "actor").order_by("-at", "-id")[:10]
    )
    total_query = urlencode([("status", s) for s in CURRENT_CABLE_STATUSES])
    return {"counts": counts, "total_query": total_query, "recent_faults": faults}
