"""Who owns each cable field the NetBox/Nautobot sync compares, and what a sync does with it.

Three owners:

* ``netbox``: the source of truth is NetBox (or Nautobot). Its value is taken at every sync,
  unless the field was edited here since the last sync: then the sync changes nothing and reports
  a conflict naming both values (never a silent overwrite of local work).
* ``cabletrack``: recorded here; the sync never writes it.
* ``both``: edited on either side. A change on one side only is taken (NetBox's) or kept (ours);
  changed on both sides to different values is a conflict naming both.

``CABLETRACK_NETBOX_FIELD_OWNERS`` overrides the default per field. The cable's ends are not in
this table: ends that differ are always a conflict with its own resolutions. Type and status are
not in it either: the type is taken when the sync creates a cable, and the status is decided here
(tests and the production gate), so the sync writes neither for a recorded cable.
"""

from __future__ import annotations

NETBOX = "netbox"
CABLETRACK = "cabletrack"
BOTH = "both"
OWNERS = (NETBOX, CABLETRACK, BOTH)

# field -> (default owner, what the field is, for the documentation table)
CABLE_FIELDS: dict[str, tuple[str, str]] = {
    "length_m": (NETBOX, "Cable length (NetBox's length and unit, in metres here)"),
    "color": (NETBOX, "Cable colour"),
    "install_date": (BOTH, "Install date (NetBox custom field `install_date`)"),
}

TAKE, KEEP, CONFLICT, SAME = "take", "keep", "conflict", "same"


class OwnershipError(ValueError):
    pass


def cable_field_owners(overrides: dict[str, str] | None) -> dict[str, str]:
    """The owner of each synced cable field: the defaults, with ``overrides`` (the setting)."""
    owners = {k: owner for k, (owner, _) in CABLE_FIELDS.items()}
    for field, owner in (overrides or {}).items():
        if field not in CABLE_FIELDS:
            raise OwnershipError(
                f"CABLETRACK_NETBOX_FIELD_OWNERS: unknown field {field!r}; one of {', '.join(CABLE_FIELDS)}."
            )
        if owner not in OWNERS:
            raise OwnershipError(
                f"CABLETRACK_NETBOX_FIELD_OWNERS: {field} owner {owner!r}; one of {', '.join(OWNERS)}."
            )
        owners[field] = owner
    return owners


def field_decision(owner: str, *, here: str | None, synced: str | None, source: str | None) -> str:
    """What the sync does with one field: ``take`` NetBox's value, ``keep`` ours, report a
    ``conflict``, or nothing to do (``same``). ``synced`` is the value this field had here right
    after the last sync (None: not known, e.g. the first sync: no local edit is assumed)."""
    if here == source:
        return SAME
    if owner == CABLETRACK:
        return KEEP
    edited_here = synced is not None and here != synced
    if owner == NETBOX:
        return CONFLICT if edited_here else TAKE
    if not edited_here:
        return TAKE
    return KEEP if source == synced else CONFLICT


def ownership_table_markdown(owners: dict[str, str]) -> str:
    """The documentation table (Operator docs), from the code's table."""
    lines = ["| Field | What | Owner (default) |", "|---|---|---|"]
    for field, (_, what) in CABLE_FIELDS.items():
        lines.append(f"| `{field}` | {what} | {owners[field]} |")
    return "\n".join(lines)
