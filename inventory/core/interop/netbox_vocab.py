"""NetBox's cable types beside our cable kinds, both ways: one table for the importer and the CSV files."""

from __future__ import annotations

from inventory.core.choices import CableKind

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
#: NetBox cable type -> our cable kind (older and coarser NetBox types map to the nearest kind)
CABLE_TYPE_FROM_NETBOX = {
    "smf": CableKind.SMF_OS2,
    "smf-os1": CableKind.SMF_OS2,
    **{v: k for k, v in CABLE_TYPE_TO_NETBOX.items()},
    "mmf": CableKind.MMF_OM4,
    "cat6": CableKind.CAT6A,
    "cat5e": CableKind.CAT6A,
}
