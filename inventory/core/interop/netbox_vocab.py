"""NetBox's vocabularies beside ours, both ways: one home for the importer, the exports and the CSV files.

Every NetBox cable type, cable status, length unit, cable profile and module status either has
an equal here or is *kept verbatim*: the importer stores NetBox's own value beside what it
became here (``ExternalRef.attributes``: ``{"netbox": {...}, "here": {...}}``), and an export
writes NetBox's value back unchanged for as long as ours still equals what it became. A value
changed here since is written in NetBox's words for the new value. So ``smf`` stays ``smf``
(not ``smf-os2``), ``decommissioning`` stays ``decommissioning``, 40 ft stays 40 ft and a
``single-1c12p`` profile is written back, although cabletrack keeps an OS2 kind, an installed
cable, a length in metres and no profile. Pure: no ORM.
"""

from __future__ import annotations

from decimal import Decimal

from inventory.core.choices import CableKind, CableStatus, TransceiverStatus

#: our cable kind -> the NetBox cable type written on export
CABLE_TYPE_TO_NETBOX = {
    CableKind.SMF_OS2: "smf-os2",
    CableKind.MMF_OM3: "mmf-om3",
    CableKind.MMF_OM4: "mmf-om4",
    CableKind.MMF_OM5: "mmf-om5",
    CableKind.DAC: "dac-passive",
    CableKind.ACC: "dac-active",
    CableKind.AOC: "aoc",
    CableKind.CAT6A: "cat6a",
}
#: NetBox cable type -> our cable kind (older and coarser NetBox types map to the nearest kind,
#: and NetBox's own type is kept verbatim). Coaxial, power and USB cables are not modelled.
CABLE_TYPE_FROM_NETBOX = {
    "smf": CableKind.SMF_OS2,
    "smf-os1": CableKind.SMF_OS2,
    **{v: k for k, v in CABLE_TYPE_TO_NETBOX.items()},
    "mmf": CableKind.MMF_OM4,
    "mmf-om1": CableKind.MMF_OM3,
    "mmf-om2": CableKind.MMF_OM3,
    "cat3": CableKind.CAT6A,
    "cat5": CableKind.CAT6A,
    "cat5e": CableKind.CAT6A,
    "cat6": CableKind.CAT6A,
    "cat7": CableKind.CAT6A,
    "cat7a": CableKind.CAT6A,
    "cat8": CableKind.CAT6A,
}
#: NetBox cable status -> ours (``decommissioning`` has no equal: the cable is still in place)
CABLE_STATUS_FROM_NETBOX = {
    "connected": CableStatus.INSTALLED,
    "planned": CableStatus.PLANNED,
    "decommissioning": CableStatus.INSTALLED,
}
#: NetBox module status -> ours (a module in a cage is installed here; ``failed`` is kept)
MODULE_STATUS_FROM_NETBOX = {"active": TransceiverStatus.INSTALLED}
#: NetBox length units in metres (NetBox's ``CableLengthUnitChoices``; Nautobot has the same)
UNIT_M = {
    "km": Decimal(1000),
    "m": Decimal(1),
    "cm": Decimal("0.01"),
    "mi": Decimal("1609.344"),
    "ft": Decimal("0.3048"),
    "in": Decimal("0.0254"),
}


class LengthUnitError(ValueError):
    """A length in a unit NetBox does not have (``length_unit_problem`` says which)."""


def length_unit_problem(unit: str | None) -> str | None:
    """Why ``unit`` is no NetBox length unit, or None: one of ``UNIT_M`` exactly, as NetBox's own
    choices are matched (``M``, ``yd`` and ``meters`` are refused there too). No unit at all
    reads as metres."""
    if unit in (None, "") or unit in UNIT_M:
        return None
    return f"Unknown length unit {unit!r}; one of {', '.join(UNIT_M)}."


def length_in_m(length, unit: str | None) -> Decimal | None:
    """A NetBox length and unit in metres, to the centimetre (``None`` for no length).

    A unit NetBox does not have raises ``LengthUnitError``: it is never read as metres."""
    if length in (None, ""):
        return None
    if problem := length_unit_problem(unit):
        raise LengthUnitError(problem)
    return (Decimal(str(length)) * UNIT_M[unit or "m"]).quantize(Decimal("0.01"))


def netbox_number(value) -> str:
    """A decimal as NetBox's CSV takes it, without trailing zeros (``40``, ``12.5``)."""
    if value in (None, ""):
        return ""
    return format(Decimal(str(value)).normalize(), "f")


def cable_status_to_netbox(status: str) -> str:
    """Our cable status in NetBox's words (a retired cable is on its way out there)."""
    if status == CableStatus.PLANNED:
        return "planned"
    return "decommissioning" if status == CableStatus.RETIRED else "connected"


def module_status_to_netbox(status: str) -> str:
    return {TransceiverStatus.FAILED: "failed", TransceiverStatus.RETIRED: "decommissioning"}.get(
        status, "active"
    )


def cable_kept(netbox: dict, here: dict) -> dict:
    """What an import keeps of a NetBox cable: its own values and what they became here."""
    return {"netbox": netbox, "here": {k: None if v is None else str(v) for k, v in here.items()}}


def cable_to_netbox(*, kind: str, status: str, length_m, kept: dict | None) -> dict:
    """A cable's type, status, length, length unit and profile in NetBox's words.

    ``kept`` is what the import kept (``cable_kept``); each NetBox value is written back
    verbatim while our value still equals what it became here, else ours is translated.
    """
    kept = kept or {}
    nb, here = kept.get("netbox") or {}, kept.get("here") or {}

    def same(field: str, ours) -> bool:
        return field in here and here[field] == (None if ours is None else str(ours))

    out = {
        "type": nb.get("type") if same("kind", kind) else CABLE_TYPE_TO_NETBOX.get(kind, ""),
        "status": nb.get("status") if same("status", status) else cable_status_to_netbox(status),
        "profile": nb.get("profile") or "",
    }
    if same("length_m", length_m):
        out["length"], out["length_unit"] = netbox_number(nb.get("length")), nb.get("length_unit") or ""
    else:
        out["length"] = netbox_number(length_m)
        out["length_unit"] = "m" if length_m is not None else ""
    return out


def module_to_netbox(*, status: str, kept: dict | None) -> str:
    """A module's status in NetBox's words: NetBox's own while ours is what it became here."""
    kept = kept or {}
    if (kept.get("here") or {}).get("status") == str(status) and (kept.get("netbox") or {}).get("status"):
        return kept["netbox"]["status"]
    return module_status_to_netbox(status)
