"""What the pages show, gathered in a fixed number of queries."""

from __future__ import annotations

from django.db.models import Count, Prefetch, Q
from django.utils import timezone

from ..choices import CableStatus
from ..models import Cable, CableEnd, Port, Rack, Transceiver
from ..selectors.history import history_for
from ..selectors.trace import port_trace

END_RELATED = ("port__device__rack", "cage__device__rack", "cage__transceiver__model__vendor")


def dashboard() -> dict:
    today = timezone.localdate()
    counts = Cable.objects.aggregate(
        total=Count("pk", filter=~Q(status=CableStatus.RETIRED)),
        overdue=Count("pk", filter=Q(retest_due__lt=today) & ~Q(status=CableStatus.RETIRED)),
        degraded=Count("pk", filter=Q(status__in=[CableStatus.DEGRADED, CableStatus.FAULTY])),
    )
    return {"counts": counts}


def search(q: str, limit: int = 20) -> dict:
    return {
        "cables": list(Cable.objects.filter(label__icontains=q).order_by("label")[:limit]),
        "racks": list(Rack.objects.filter(name__icontains=q).order_by("name")[:limit]),
        "transceivers": list(
            Transceiver.objects.filter(serial__icontains=q).select_related("model", "cage__device")[:limit]
        ),
        "ports": list(
            Port.objects.filter(
                Q(name__icontains=q) | Q(device__name__icontains=q) | Q(aliases__name__icontains=q)
            )
            .select_related("device")
            .distinct()
            .order_by("device__name", "name")[:limit]
        ),
    }


def _end_port(end: CableEnd) -> Port | None:
    if end.port_id:
        return end.port
    if end.cage_id:
        return (
            Port.objects.select_related("device__rack")
            .filter(cage_id=end.cage_id, connector=end.connector)
            .order_by("lane_start")
            .first()
        )
    return None


def cable_page(cable: Cable) -> dict:
    ends = list(cable.ends.select_related(*END_RELATED).order_by("side", "leg"))
    a = next((e for e in ends if e.side == "A"), None)
    start = _end_port(a) if a and a.active else None
    trace = port_trace(start) if start else None
    return {
        "cable": cable,
        "ends": ends,
        "trace": trace,
        "overdue": bool(cable.retest_due and cable.retest_due < timezone.localdate()),
        "history": history_for(cable)[:20],
    }


def rack_page(rack: Rack) -> dict:
    ends = (
        CableEnd.objects.filter(active=True)
        .filter(Q(port__device__rack=rack) | Q(cage__device__rack=rack))
        .select_related("cable", *END_RELATED)
    )
    cable_ids = {e.cable_id for e in ends}
    cables = list(
        Cable.objects.filter(pk__in=cable_ids)
        .prefetch_related(Prefetch("ends", queryset=CableEnd.objects.select_related(*END_RELATED)))
        .order_by("label")
    )
    transceivers = list(
        Transceiver.objects.filter(cage__device__rack=rack)
        .select_related("model__vendor", "cage__device")
        .order_by("cage__device__position_u", "cage__index")
    )
    return {"rack": rack, "cables": cables, "transceivers": transceivers, "today": timezone.localdate()}
