"""What the pages show, gathered in a fixed number of queries: one module per page."""

from inventory.selectors.pages.cable import (
    ACTION_RULES,
    END_ONLY,
    EndView,
    LinkRows,
    cable_actions,
    cable_by_label,
    cable_links,
    cable_page,
    cable_page_ends,
    cable_trace,
    step_links,
)
from inventory.selectors.pages.device import device_page, port_page
from inventory.selectors.pages.home import dashboard
from inventory.selectors.pages.lists import (
    CABLE_SORTS,
    TRANSCEIVER_SORTS,
    attach_decisions,
    attach_end_cells,
    cable_list_queryset,
    end_text,
    transceiver_list_queryset,
)
from inventory.selectors.pages.path import path_diagram, trunk_links
from inventory.selectors.pages.rack import RackRow, rack_page
from inventory.selectors.pages.racks import rack_list
from inventory.selectors.pages.retest import DUE_SOON_DAYS, retest_state
from inventory.selectors.pages.search import search, search_single_target
from inventory.selectors.pages.transceiver import transceiver_page
from inventory.selectors.plant.journal import journal_for, journal_target

__all__ = [
    "ACTION_RULES",
    "CABLE_SORTS",
    "DUE_SOON_DAYS",
    "END_ONLY",
    "TRANSCEIVER_SORTS",
    "EndView",
    "LinkRows",
    "RackRow",
    "attach_decisions",
    "attach_end_cells",
    "cable_actions",
    "cable_by_label",
    "cable_links",
    "cable_list_queryset",
    "cable_page",
    "cable_page_ends",
    "cable_trace",
    "step_links",
    "dashboard",
    "device_page",
    "journal_for",
    "journal_target",
    "end_text",
    "path_diagram",
    "port_page",
    "rack_list",
    "rack_page",
    "retest_state",
    "search",
    "search_single_target",
    "transceiver_list_queryset",
    "transceiver_page",
    "trunk_links",
]
