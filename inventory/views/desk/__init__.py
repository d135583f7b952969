"""Desk pages: cable and module lists (the API's FilterSets), forms, bulk actions, plan import."""

from inventory.views.desk.cables import cable_bulk_status, cable_create, cable_edit, cable_list
from inventory.views.desk.plan_import import cable_plan_import
from inventory.views.desk.transceivers import transceiver_create, transceiver_edit, transceiver_list

__all__ = [
    "cable_bulk_status",
    "cable_create",
    "cable_edit",
    "cable_list",
    "cable_plan_import",
    "transceiver_create",
    "transceiver_edit",
    "transceiver_list",
]
