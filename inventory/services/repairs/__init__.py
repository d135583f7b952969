"""Recording repairs on alerts: on the alert page or API (``repair_record``) and by the
replace-cable and swap-module forms on the open alerts they move (``repairs_record_by_part``)."""

from inventory.services.repairs.record import (
    DOUBLE_TAP,
    VISIT,
    PartRepair,
    repair_record,
    repairs_record_by_part,
)

__all__ = ["DOUBLE_TAP", "VISIT", "PartRepair", "repair_record", "repairs_record_by_part"]
