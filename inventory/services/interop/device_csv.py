"""NetBox's device bulk-import CSV, both ways, for sites without API access.

NetBox's *Devices > Import* takes ``name, role, manufacturer, device_type, status, site,
rack, position, face, serial, asset_tag, ...``; its export writes the same columns. Here a
device is its name, role, rack and U, vendor, model, serial and asset tag, so those columns
are read and written; the rest (``status``, ``site``, ``face``, ``airflow``) are written for
NetBox and ignored on the way in (the site follows from the rack). Racks must exist here
(their names are global). A device's ports come from a cable plan or a NetBox API import:
NetBox derives them from device-type templates, which a CSV does not carry.

The import is the cable plan's flow: every row is checked against the plant as a set (one
query per kind of check), a dry run reports create / change / unchanged / error per row,
and an apply writes all rows or none, with history.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify
from simple_history.utils import bulk_update_with_history

from inventory.access import authz
from inventory.core import csvsafe
from inventory.core.choices import DeviceRole
from inventory.core.elevation import rack_units_problem
from inventory.core.names import name_problem
from inventory.db import bulk
from inventory.models import Device, Rack, Vendor
from inventory.models.base import sanctioned_bulk_write
from inventory.services.interop.netbox_map import ROLE_MAP
from inventory.services.plans.cable_plan_rows import PlanResult, RowResult
from inventory.services.plans.files import PlanFileError, csv_dict_rows
from inventory.services.plant import cable_sites

MAX_ROWS = 20_000
COLUMNS = [
    "name",
    "role",
    "manufacturer",
    "device_type",
    "status",
    "site",
    "rack",
    "position",
    "face",
    "serial",
    "asset_tag",
]
#: our role -> the NetBox role slug written on export (read back through ``ROLE_MAP``)
ROLE_SLUG = {
    DeviceRole.GPU_NODE: "gpu-node",
    DeviceRole.LEAF: "leaf-switch",
    DeviceRole.SPINE: "spine-switch",
    DeviceRole.STORAGE: "storage",
    DeviceRole.MGMT_SWITCH: "management-switch",
    DeviceRole.PATCH_PANEL: "patch-panel",
    DeviceRole.CASSETTE: "cassette",
    DeviceRole.OTHER: "other",
}
FIELDS = ("role", "rack_id", "position_u", "vendor_id", "model", "serial", "asset_tag")


class DeviceCsvError(ValueError):
    pass


def devices_csv_export(*, devices=None) -> str:
    """Devices (not retired) in NetBox's device import CSV, CRLF like NetBox's own files."""
    qs = devices if devices is not None else Device.objects.filter(retired_at__isnull=True)
    rows = qs.order_by("name").values_list(
        "name",
        "role",
        "vendor__name",
        "model",
        "rack__row__room__site__slug",
        "rack__name",
        "position_u",
        "serial",
        "asset_tag",
    )
    buf = io.StringIO()
    w = csvsafe.writer(buf, lineterminator="\r\n")
    w.writerow(COLUMNS)
    for name, role, vendor, model, site, rack, pos, serial, tag in rows.iterator(chunk_size=2000):
        w.writerow(
            [
                name,
                ROLE_SLUG.get(role, "other"),
                vendor or "",
                model,
                "active",
                site or "",
                rack or "",
                "" if pos is None else pos,
                "front" if pos is not None else "",
                serial,
                tag or "",
            ]
        )
    return buf.getvalue()


@dataclass
class _Row:
    result: RowResult
    values: dict = field(default_factory=dict)
    vendor: str = ""
    rack: str = ""


def devices_csv_import(*, text: str, dry_run: bool = True, actor=None) -> PlanResult:
    """Read NetBox's device CSV; a dry run reports per row, an apply writes all rows or none."""
    try:
        raw_rows = csv_dict_rows(text)
    except PlanFileError as exc:
        raise DeviceCsvError(str(exc)) from exc
    if not raw_rows:
        raise DeviceCsvError("The file has no devices: a header line, then a line per device.")
    if "name" not in raw_rows[0]:
        raise DeviceCsvError("The header needs at least: name, role, rack, position.")
    result = PlanResult(dry_run=dry_run)
    if len(raw_rows) > MAX_ROWS:
        result.rows.append(
            RowResult(
                row=0, label="", action="error", errors={"rows": f"At most {MAX_ROWS} rows per import."}
            )
        )
        return result
    rows = [_parse(n, raw) for n, raw in enumerate(raw_rows, 1)]
    result.rows = [r.result for r in rows]
    ok = [r for r in rows if not r.result.errors]

    seen: dict[str, int] = {}
    for r in ok:
        name = r.result.label
        if name in seen:
            r.result.errors["name"] = f"Name repeated (row {seen[name]})."
        seen.setdefault(name, r.result.row)
    vendors, existing = _check_against_plant(ok, names=seen)
    if actor is not None:
        _check_sites(ok, existing, actor)
    for r in rows:
        if r.result.errors:
            r.result.action = "error"
    if dry_run or result.errors:
        return result
    _write(ok, vendors=vendors, existing=existing, actor=actor)
    result.applied = True
    return result


def _check_against_plant(ok: list[_Row], *, names) -> tuple[dict[str, int], dict[str, Device]]:
    """Racks, rack units, asset tags and vendors of each row against the recorded plant; each row
    of a device already recorded becomes a change or unchanged. Returns (vendor ids by lower-case
    name, recorded devices by name)."""
    racks = {
        rk.name: rk
        for rk in Rack.objects.filter(name__in={r.rack for r in ok if r.rack}).only("pk", "name", "u_height")
    }
    vendors = {v.name.lower(): v.pk for v in Vendor.objects.all().only("pk", "name")}
    # whole rows: the history rows of the changed ones copy every field
    existing = {d.name: d for d in Device.objects.filter(name__in=names)}
    tags = dict(
        Device.objects.filter(
            asset_tag__in={r.values["asset_tag"] for r in ok if r.values["asset_tag"]}
        ).values_list("asset_tag", "name")
    )
    # Who holds a U in the racks the file names (at most a rack's height each): one query.
    taken = {
        (rack_id, pos): name
        for rack_id, pos, name in Device.objects.filter(
            rack_id__in=[rk.pk for rk in racks.values()], position_u__isnull=False, retired_at__isnull=True
        ).values_list("rack_id", "position_u", "name")
    }
    in_batch: dict[tuple[int, int], str] = {}
    for r in ok:
        v, err, name = r.values, r.result.errors, r.result.label
        if r.rack:
            rack = racks.get(r.rack)
            if rack is None:
                err["rack"] = f"No rack {r.rack!r} here: create the rack first."
                continue
            v["rack_id"] = rack.pk
            pos = v["position_u"]
            if pos is not None:
                height = existing[name].height_u if name in existing else 1
                problem = rack_units_problem(
                    rack=rack.name, u_height=rack.u_height, position_u=pos, height_u=height
                )
                if problem:
                    err["position"] = problem
                slot = (rack.pk, pos)
                holder = taken.get(slot) or in_batch.get(slot)
                if holder and holder != name:
                    err["position"] = f"{rack.name} U{pos} holds {holder}."
                in_batch[slot] = name
        else:
            v["rack_id"] = None
        if v["asset_tag"] and tags.get(v["asset_tag"], name) != name:
            err["asset_tag"] = f"Asset tag {v['asset_tag']!r} belongs to {tags[v['asset_tag']]}."
        v["vendor_id"] = vendors.get(r.vendor.lower()) if r.vendor else None
        dev = existing.get(name)
        if dev is not None:
            changes = {
                k: {"old": getattr(dev, k), "new": v[k]}
                for k in FIELDS
                if not (k == "vendor_id" and r.vendor and v[k] is None) and getattr(dev, k) != v[k]
            }
            if r.vendor and v["vendor_id"] is None:
                changes["vendor"] = {"old": None, "new": r.vendor}
            r.result.action = "change" if changes else "unchanged"
            r.result.changes = changes
    return vendors, existing


def _check_sites(ok: list[_Row], existing: dict[str, Device], actor) -> None:
    """The one policy (``authz``, action ``import``) with the sites a row writes in: the rack it
    puts the device in, and the rack it takes a recorded device out of. A row in a site the
    importer may not write is an error naming the site (``site``), so nothing is written."""
    writes = [r for r in ok if not r.result.errors and r.result.action in ("create", "change")]
    racks = {
        r.result.label: {r.values["rack_id"]}
        | ({existing[r.result.label].rack_id} if r.result.label in existing else set())
        for r in writes
    }
    site_of = dict(
        Rack.objects.filter(pk__in={rk for rks in racks.values() for rk in rks if rk}).values_list(
            "pk", "row__room__site_id"
        )
    )
    site_of[None] = None  # a device in no rack is in no site: for engineers only
    refusals = authz.site_refusals(actor, "import", site_of.values())
    for r in writes:
        why = next((refusals[s] for rk in racks[r.result.label] if (s := site_of[rk]) in refusals), None)
        if why:
            r.result.errors["site"] = why


def _write(ok: list[_Row], *, vendors: dict[str, int], existing: dict[str, Device], actor) -> None:
    """New vendors and devices in bulk, changed devices with a history row each, in one transaction."""
    now = timezone.now()
    with transaction.atomic():
        new_vendors = sorted({r.vendor for r in ok if r.vendor and r.vendor.lower() not in vendors})
        made = bulk.bulk_insert(
            Vendor,
            [Vendor(name=n, slug=slugify(n)[:100] or f"vendor-{i}") for i, n in enumerate(new_vendors)],
            actor=actor,
            reason="device CSV import",
        )
        vendors.update({v.name.lower(): v.pk for v in made})
        for r in ok:
            if r.vendor:
                r.values["vendor_id"] = vendors[r.vendor.lower()]
        creates = [Device(name=r.result.label, **r.values) for r in ok if r.result.action == "create"]
        bulk.bulk_insert(Device, creates, actor=actor, reason="device CSV import")
        changed, moved = [], []
        for r in ok:
            if r.result.action == "change":
                dev = existing[r.result.label]
                if dev.rack_id != r.values["rack_id"]:
                    moved.append(dev.pk)
                for k in FIELDS:
                    setattr(dev, k, r.values[k])
                dev.updated_at = now
                changed.append(dev)
        with sanctioned_bulk_write():  # simple-history writes a history row per device
            bulk_update_with_history(
                changed,
                Device,
                [*FIELDS, "updated_at"],
                batch_size=2000,
                default_user=actor,
                default_change_reason="device CSV import",
                default_date=now,
            )
        # Devices moved to another rack (perhaps another site): their cables' site column.
        cable_sites.cable_sites_refresh_for_devices(device_ids=moved)


def _parse(n: int, raw: dict) -> _Row:
    def text(key: str) -> str:
        return (raw.get(key) or "").strip()

    name = text("name")
    res = RowResult(row=n, label=name, action="create")
    err = res.errors
    if not name:
        err["name"] = "Required."
    elif len(name) > 100:
        err["name"] = "At most 100 characters."
    elif problem := name_problem(name):
        err["name"] = problem  # the models' rule (a bulk write does not run their validators)
    role_slug = text("role").lower()
    role = ROLE_MAP.get(role_slug) or (role_slug if role_slug in DeviceRole.values else None)
    if role is None:
        err["role"] = f"Unknown role {text('role')!r}; one of {', '.join(sorted(ROLE_MAP))}."
    position = None
    if text("position"):
        try:
            position = int(float(text("position")))
            if position < 1:
                raise ValueError
        except (ValueError, OverflowError):  # "inf": no int, and no 500 naming nothing
            err["position"] = f"Not a rack unit: {text('position')!r}."
    values = {
        "role": role,
        "position_u": position,
        "model": text("device_type")[:100],
        "serial": text("serial")[:100],
        "asset_tag": text("asset_tag")[:100] or None,
    }
    return _Row(result=res, values=values, vendor=text("manufacturer")[:100], rack=text("rack"))
