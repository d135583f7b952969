"""The cable's site (``Cable.site``): derived from its ends, recomputed set-based after each write.

The rule: the site of the cable's first *placed* end in (side, leg) order, an end being placed
when its port or cage belongs to a device in a rack. So a cable is in its A end's site; a cable
whose A end is unplaced (or unterminated) takes its first placed B leg's; a cable with no placed
end has none. A cable whose ends are in two sites (a trunk between buildings) is listed under
its A end's site only. Retired cables keep the site their ends were in.

Every writer of what the rule reads calls one of these after its write, in its transaction:
ends (``cable_install``, the cable-plan import, NetBox imports and end moves, the demo
builder), a device's rack (device CSV, API, admin) and the location tree (a rack, row or room
moved under another parent). Each is a fixed number of statements per 5,000 cables, whatever
the number of cables; nothing is written for a cable whose site did not change.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import F, OuterRef, Subquery
from django.db.models.functions import Coalesce

from inventory.models import Cable, CableEnd, Cage, Device, Port, Rack, Room, Row
from inventory.models.base import sanctioned_bulk_write

CHUNK = 5000


def _first_placed_site():
    """The site of a cable's first placed end (``OuterRef("pk")`` is the cable)."""
    return (
        CableEnd.objects.filter(cable_id=OuterRef("pk"))
        .annotate(
            end_site=Coalesce(
                F("port__device__rack__row__room__site_id"), F("cage__device__rack__row__room__site_id")
            )
        )
        .filter(end_site__isnull=False)
        .order_by("side", "leg")
        .values("end_site")[:1]
    )


def _refresh(cables) -> int:
    """Recompute the site of the cables of ``cables`` (a queryset); returns how many changed."""
    moved: dict[int | None, list[int]] = defaultdict(list)
    for pk, old, new in cables.annotate(new_site=Subquery(_first_placed_site())).values_list(
        "pk", "site_id", "new_site"
    ):
        if old != new:
            moved[new].append(pk)
    # The site is derived (no history of its own): a plain UPDATE per target site, sanctioned.
    with sanctioned_bulk_write():
        for site_id, ids in moved.items():
            for start in range(0, len(ids), CHUNK):
                Cable.objects.filter(pk__any=ids[start : start + CHUNK]).update(site_id=site_id)
    return sum(len(ids) for ids in moved.values())


def cable_sites_refresh(*, cable_ids: Iterable[int] | None = None) -> int:
    """Recompute ``Cable.site`` for ``cable_ids`` (None: every cable). Returns how many changed."""
    if cable_ids is None:
        changed, last = 0, 0
        while True:
            ids = list(Cable.objects.filter(pk__gt=last).order_by("pk").values_list("pk", flat=True)[:CHUNK])
            if not ids:
                return changed
            changed += _refresh(Cable.objects.filter(pk__gte=ids[0], pk__lte=ids[-1]))
            last = ids[-1]
    ids = sorted(set(cable_ids))
    return sum(_refresh(Cable.objects.filter(pk__any=ids[i : i + CHUNK])) for i in range(0, len(ids), CHUNK))


def first_placed_sites(devices_per_cable: list[list[int | None]]) -> list[int | None]:
    """The same rule for cables not yet written, from the rows a bulk writer has in hand.

    ``devices_per_cable``: for each cable, the device of each end in (side, leg) order (None for
    an unterminated end). One query for all the devices; the COPY paths set the column as they
    insert instead of updating every new row again.
    """
    wanted = sorted({d for devices in devices_per_cable for d in devices if d is not None})
    site_of: dict[int, int | None] = {}
    for i in range(0, len(wanted), CHUNK):
        site_of.update(
            Device.objects.filter(pk__any=wanted[i : i + CHUNK]).values_list("pk", "rack__row__room__site_id")
        )
    return [
        next((site_of[d] for d in devices if d is not None and site_of.get(d) is not None), None)
        for devices in devices_per_cable
    ]


def cable_sites_refresh_for_devices(*, device_ids: Iterable[int]) -> int:
    """After devices moved to other racks (or out of one): their cables' sites."""
    devices = sorted(set(device_ids))
    cables: set[int] = set()
    for i in range(0, len(devices), CHUNK):
        chunk = devices[i : i + CHUNK]
        # Each path on its own index (ends by port, ends by cage), never an OR across the joins.
        cables.update(CableEnd.objects.filter(port__device_id__any=chunk).values_list("cable_id", flat=True))
        cables.update(CableEnd.objects.filter(cage__device_id__any=chunk).values_list("cable_id", flat=True))
    return cable_sites_refresh(cable_ids=cables) if cables else 0


def cable_sites_refresh_for_locations(
    *, racks: Iterable[int] = (), rows: Iterable[int] = (), rooms: Iterable[int] = ()
) -> int:
    """After racks, rows or rooms moved under another parent: the cables of every device below."""
    rack_ids = set(racks)
    rack_ids.update(Rack.objects.filter(row_id__any=list(set(rows))).values_list("pk", flat=True))
    row_ids = Row.objects.filter(room_id__any=list(set(rooms))).values("pk")
    rack_ids.update(Rack.objects.filter(row__in=row_ids).values_list("pk", flat=True))
    if not rack_ids:
        return 0
    devices = Device.objects.filter(rack_id__any=sorted(rack_ids)).values_list("pk", flat=True)
    return cable_sites_refresh_for_devices(device_ids=devices)


#: The key whose change moves what is below to another place, per model people edit one by one
#: (the API's and the admin's updates): what ``cable_sites_refresh_for_moved`` follows.
PARENT_KEYS = {
    Room: "site_id",
    Row: "room_id",
    Rack: "row_id",
    Device: "rack_id",
    Cage: "device_id",
    Port: "device_id",
}


def cable_sites_refresh_for_moved(obj) -> int:
    """After ``obj`` (one of ``PARENT_KEYS``) moved under another parent: the sites of the cables
    below it."""
    if isinstance(obj, Room):
        return cable_sites_refresh_for_locations(rooms=[obj.pk])
    if isinstance(obj, Row):
        return cable_sites_refresh_for_locations(rows=[obj.pk])
    if isinstance(obj, Rack):
        return cable_sites_refresh_for_locations(racks=[obj.pk])
    if isinstance(obj, Device):
        return cable_sites_refresh_for_devices(device_ids=[obj.pk])
    ends = CableEnd.objects.filter(**({"cage_id": obj.pk} if isinstance(obj, Cage) else {"port_id": obj.pk}))
    return cable_sites_refresh(cable_ids=ends.values_list("cable_id", flat=True))
