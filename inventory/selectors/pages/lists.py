"""The desk cable and module lists: sorting, the end cells of a page of rows, a plug as text."""

from __future__ import annotations

from django.db.models import F, Prefetch

from inventory.models import CableEnd
from inventory.selectors.decision import cable_decisions
from inventory.selectors.pages.ends import end_lines

# Only sorts an index serves in order (the column, then the id: ``cable_status_id`` and its
# siblings in migration 0011), so any page is an index range however large the plant. Sorting by
# a joined name (vendor, part, device) would sort every matching row first; those columns are
# filters instead.
CABLE_SORTS = {
    "label": "label",
    "status": "status",
    "kind": "kind",
    "length": "length_m",
    "installed": "install_date",
    "retest": "retest_due",
}
TRANSCEIVER_SORTS = {
    "serial": "serial",
    "status": "status",
}


def _ordering(sort: str, allowed: dict[str, str], default: str, model, lead: str = "") -> tuple[str, list]:
    """The ``order_by`` of a list sorted by ``sort`` (``key`` or ``-key``), and the sort it kept.

    A column the model leaves nullable sorts its blanks last in both directions (no retest date
    on a copper cable, no length yet): the rows the engineer sorted for come first, on SQLite
    (which puts NULLs first ascending) as on PostgreSQL (first descending). Only there: on a NOT
    NULL column a NULLS clause would stop PostgreSQL walking its index backwards. The ascending
    order is the ``cable_*`` index's own; the descending one has its mirror (migration 0033).
    """
    key = sort.lstrip("-")
    if key not in allowed:
        sort, key = default, default
    desc = sort.startswith("-")
    sign = "-" if desc else ""
    return sort, [*([sign + lead] if lead else []), column_order(model, allowed[key], desc), sign + "pk"]


def column_order(model, column: str, desc: bool):
    """One column of a list's order, for the desk lists and the API's ``?ordering=`` alike: a
    column the model leaves nullable sorts its blanks last in both directions (see ``_ordering``);
    a NOT NULL one, or a related lookup, sorts plainly."""
    field = model._meta.get_field(column) if "__" not in column else None
    if field is not None and field.null:
        return F(column).desc(nulls_last=True) if desc else F(column).asc(nulls_last=True)
    return ("-" if desc else "") + column


def cable_list_queryset(qs, *, sort: str = "label", prefetch_ends: bool = True, within_site: bool = False):
    """The desk cable list: the FilterSet's queryset, sorted, with what each row shows.

    ``prefetch_ends=False`` leaves the ends to :func:`attach_end_cells` and the alert flag to
    :func:`attach_decisions`
    (the HTML page reads them for its page of rows only, in two flat queries).
    ``within_site`` (the rows are one site's: ``CableFilter.within_site``) sorts by the site
    first, the same rows in the same order: then only a ``cable_site_*`` index gives the order,
    and a page is a range of it, never a walk of another index past every other site's cables.
    """
    sort, order = _ordering(sort, CABLE_SORTS, "label", qs.model, lead="site_id" if within_site else "")
    qs = qs.select_related("vendor").order_by(*order)
    if prefetch_ends:
        ends = CableEnd.objects.select_related("port__device__rack", "cage__device__rack").order_by(
            "side", "leg"
        )
        qs = qs.prefetch_related(Prefetch("ends", queryset=ends))
    return sort, qs


def attach_end_cells(cables) -> None:
    """Set ``end_cells`` on each cable: ``(A lines, B lines)``, ``rack U<u> device port`` each.

    One query for the whole page instead of five model instances per end and a template loop
    over every end for each side.
    """
    cells = end_lines([c.pk for c in cables], active_only=False, keep_unterminated=True)
    for c in cables:
        c.end_cells = cells[c.pk]


def attach_decisions(cables) -> None:
    """Set ``decision`` on each cable of a page: the one decision (``selectors.decision``) its
    page and the API show, read for the page's rows in a fixed number of queries; ``has_alert``
    (the row's "alert" flag) is the decision's open alerts, not a second look at the alerts."""
    decisions = cable_decisions(cables=list(cables))
    for c in cables:
        c.decision = decisions[c.pk]
        c.has_alert = bool(c.decision.alerts)


def transceiver_list_queryset(qs, *, sort: str = "serial"):
    sort, order = _ordering(sort, TRANSCEIVER_SORTS, "serial", qs.model)
    return sort, qs.select_related("model__vendor", "cage__device__rack", "stock_site").order_by(*order)


def end_text(e: CableEnd) -> str:
    """``rack U device port`` for a plug, as on the label."""
    if e.port_id:
        dev, where = e.port.device, e.port.name
    elif e.cage_id:
        dev = e.cage.device
        where = e.cage.name + (f"/{e.connector}" if (e.connector or 1) > 1 else "")
    else:
        return "unterminated"
    rack = dev.rack.name if dev.rack_id else "-"
    return f"{rack} U{dev.position_u or '?'} {dev.name} {where}"
