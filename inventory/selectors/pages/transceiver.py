"""The module page: where it has been placed, the cables in its cage, its history."""

from __future__ import annotations

from inventory.models import Cable, Transceiver
from inventory.selectors.collectives.impact import module_impact, page_impact, recent
from inventory.selectors.pages.cable import human_history
from inventory.selectors.plant.history import history_for


def transceiver_page(xcvr: Transceiver) -> dict:
    placements = list(
        xcvr.placements.select_related("cage__device__rack", "installed_by", "removed_by").order_by(
            "-installed_at", "-id"
        )
    )
    cables = []
    if xcvr.cage_id:
        cables = list(
            Cable.objects.filter(ends__cage_id=xcvr.cage_id, ends__active=True).distinct().order_by("label")
        )
    return {
        "xcvr": xcvr,
        "placements": placements,
        "cables": cables,
        "history": human_history(history_for(xcvr)[:30]),
        "impact": page_impact(module_impact(transceiver=xcvr, **recent()), "module"),
    }
