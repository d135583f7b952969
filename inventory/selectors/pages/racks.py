"""The racks page: every rack by site, hall (room) and row, in walking order."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from inventory.core.natsort import natural_key
from inventory.models import Rack, Site
from inventory.models.locations import name_page_urls


@dataclass
class RowOfRacks:
    name: str
    racks: list[tuple[str, str]] = field(default_factory=list)  # (name, its page's URL), in walking order


@dataclass
class Hall:
    site: str
    room: str
    rows: list[RowOfRacks] = field(default_factory=list)

    @property
    def rack_count(self) -> int:
        return sum(len(r.racks) for r in self.rows)


def rack_list(site: str = "") -> dict:
    """Racks grouped by site and hall, rows in natural order, racks along the row (``position``).

    One query of plain values (no model instances): a 131,072-GPU site has a few thousand racks.
    ``site`` (slug or name) narrows to one site; an unknown site lists nothing and says so.
    """
    racks = Rack.objects.order_by()
    chosen = None
    if site:
        chosen = Site.objects.filter(Q(slug=site) | Q(name=site)).first()
        racks = racks.filter(row__room__site=chosen) if chosen else racks.none()
    rows = racks.values_list("name", "position", "row__name", "row__room__name", "row__room__site__name")
    halls: dict[tuple[str, str], dict[str, list[tuple[int, tuple, str]]]] = {}
    for name, position, row, room, site_name in rows:
        halls.setdefault((site_name, room), {}).setdefault(row, []).append(
            (position, natural_key(name), name)
        )
    out = []
    for (site_name, room), by_row in sorted(
        halls.items(), key=lambda kv: (natural_key(kv[0][0]), natural_key(kv[0][1]))
    ):
        hall = Hall(site=site_name, room=room)
        for row in sorted(by_row, key=natural_key):
            names = [n for _, _, n in sorted(by_row[row])]
            hall.rows.append(
                RowOfRacks(name=row, racks=list(zip(names, name_page_urls("rack-page", names), strict=True)))
            )
        out.append(hall)
    return {
        "halls": out,
        "site": chosen,
        "site_query": site[:100],
        "sites": list(Site.objects.order_by("name").values_list("slug", "name")),
        "rack_total": sum(h.rack_count for h in out),
    }
