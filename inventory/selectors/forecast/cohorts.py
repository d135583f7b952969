"""Cohort inputs of the forecast: installed base, failures, exposure and spares per cohort cell.

Items that fail like modules: transceivers, and sealed cables (DAC/ACC/AOC). Each cohort
cell is (site, vendor, part number, form factor, date-code lot); every query here groups by
that key in the database and returns one row per cell, never one per item. The modules'
installed base, exposure and failed placements come from ONE pass (raw SQL grouped by small
integer keys; names are joined on afterwards in Python over a few thousand cells).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.db import connection
from django.db.models import (
    Count,
    DateField,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from inventory.core.choices import (
    CableKind,
    CableStatus,
    PlacementEnd,
    RmaOutcome,
    TransceiverStatus,
)
from inventory.models import (
    Cable,
    RmaCase,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
)
from inventory.selectors.forecast.sql import epoch_sql, heavy_queries, table_names

Key = tuple[str, str, str, str, str]  # site, vendor, part number, form factor, lot


NO_SITE = "(no site)"


def lot_of(date_code: str | None) -> str:
    dc = date_code or ""
    return dc[:4] if len(dc) >= 6 and dc[:6].isdigit() else dc


_CABLE_IN_SERVICE = [
    CableStatus.INSTALLED,
    CableStatus.TESTED,
    CableStatus.IN_PRODUCTION,
    CableStatus.DEGRADED,
    CableStatus.FAULTY,
]


@dataclass
class CohortData:
    """Per cohort cell: installed now, confirmed failures, exposure (module-years)."""

    installed: dict[Key, int] = field(default_factory=lambda: defaultdict(int))
    failures: dict[Key, int] = field(default_factory=lambda: defaultdict(int))
    exposure_years: dict[Key, float] = field(default_factory=lambda: defaultdict(float))
    spares_on_hand: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    # (transceiver model id, raw date code) -> (vendor, lot): how link ends find their cohort.
    lots: dict[tuple[int, str], tuple[str, str]] = field(default_factory=dict)
    # Installed modules per (model id, raw date code), and the oldest open placement: what the
    # link ranking needs to prune (see ``link_features``).
    module_installed: dict[tuple[int, str], int] = field(default_factory=lambda: defaultdict(int))
    oldest_install: datetime | None = None

    def keys(self) -> list[Key]:
        return sorted(set(self.installed) | set(self.failures) | set(self.exposure_years))


def _key(row: dict) -> Key:
    return (
        row.get("k_site") or NO_SITE,
        row.get("k_vendor") or "(unknown)",
        row.get("k_part") or "(unknown)",
        row.get("k_ff") or "",
        lot_of(row.get("k_lot")),
    )


def _years(d) -> float:
    if d is None:
        return 0.0
    if isinstance(d, timedelta):
        return d.total_seconds() / 86400.0 / 365.0
    return float(d) / 86400e6 / 365.0  # microseconds (some backends)


def _ntf_after(removed_at_ref: str = "removed_at") -> Exists:
    """An RMA on the same module, opened after this removal, that came back 'no trouble found'."""
    return Exists(
        RmaCase.objects.filter(
            transceiver_id=OuterRef("transceiver_id"),
            outcome=RmaOutcome.NO_TROUBLE_FOUND,
            opened_at__gte=OuterRef(removed_at_ref),
        )
    )


def failed_placements():
    """Placements that ended in a failure not later cleared by a 'no trouble found' RMA."""
    return TransceiverPlacement.objects.filter(end_reason=PlacementEnd.FAILED).filter(~_ntf_after())


def _module_cells(*, now: datetime) -> list[tuple]:
    """(site name, model id, date code, installed, exposure seconds, failures) per cell.

    One pass over modules and their placements (a module without placements is one row):
    installed is a module with status ``installed`` in a cage, counted on its open placement
    (or its only row when it has no placement history, as imported modules have); exposure is
    every placement's time to its removal or ``now``; a ``failed`` end is a failure unless an
    RMA opened afterwards found no trouble. Joined once to the cage's site, grouped by integer
    keys.
    """
    t = table_names(
        "Transceiver", "TransceiverPlacement", "Cage", "Device", "Rack", "Row", "Room", "Site", "RmaCase"
    )
    sql = f"""
        SELECT s.name, i.model_id, i.date_code, SUM(i.inst), SUM(i.expo), SUM(i.fail), MIN(i.open_at)
        FROM (
            SELECT COALESCE(p.cage_id, x.cage_id) AS cage_id, x.model_id, x.date_code,
                   CASE WHEN x.status = %(installed)s AND x.cage_id IS NOT NULL
                             AND (p.id IS NULL OR p.removed_at IS NULL) THEN 1 ELSE 0 END AS inst,
                   CASE WHEN p.id IS NULL THEN 0.0
                        ELSE COALESCE({epoch_sql("p.removed_at")}, %(now_s)s) - {epoch_sql("p.installed_at")}
                   END AS expo,
                   CASE WHEN p.end_reason = %(failed)s
                             AND (n.last_ntf IS NULL OR p.removed_at IS NULL OR n.last_ntf < p.removed_at)
                        THEN 1 ELSE 0 END AS fail,
                   CASE WHEN p.removed_at IS NULL THEN p.installed_at END AS open_at
            FROM {{Transceiver}} x
            LEFT JOIN {{TransceiverPlacement}} p ON p.transceiver_id = x.id AND {{before_now}}
            LEFT JOIN (
                SELECT transceiver_id, MAX(opened_at) AS last_ntf FROM {{RmaCase}}
                WHERE outcome = %(ntf)s AND transceiver_id IS NOT NULL GROUP BY transceiver_id
            ) n ON n.transceiver_id = p.transceiver_id
        ) i
        JOIN {{Cage}} c ON c.id = i.cage_id
        JOIN {{Device}} d ON d.id = c.device_id
        LEFT JOIN {{Rack}} k ON k.id = d.rack_id
        LEFT JOIN {{Row}} w ON w.id = k.row_id
        LEFT JOIN {{Room}} m ON m.id = w.room_id
        LEFT JOIN {{Site}} s ON s.id = m.site_id
        GROUP BY s.name, i.model_id, i.date_code
    """.format(  # noqa: S608 - table names from model _meta; values are parameters
        **t,
        # A plain timestamp comparison on PostgreSQL; SQLite compares seconds.
        before_now="p.installed_at < %(now)s"
        if connection.vendor == "postgresql"
        else f"{epoch_sql('p.installed_at')} < %(now_s)s",
    )  # noqa: S608 - table names from model meta, values are parameters
    params = {
        "installed": TransceiverStatus.INSTALLED,
        "failed": PlacementEnd.FAILED,
        "ntf": RmaOutcome.NO_TROUBLE_FOUND,
        "now_s": now.timestamp(),
        "now": now,
    }
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


# (site name, transceiver model id, raw date code) -> the module's cohort cell.
ModuleKey = Callable[[str | None, int, str | None], Key]


def cohort_data(*, now: datetime) -> CohortData:
    """Installed base, confirmed failures, exposure and spares, grouped per cohort cell.

    Confirmed failures:

    * a placement that ended ``failed``, unless an RMA opened afterwards found no trouble;
    * a confirmed RMA on a module that has no failed placement (failed before installation);
    * a module with status ``failed`` and neither of the above (recorded failed directly);
    * a sealed cable (DAC/ACC/AOC) retired after being marked faulty, unless an RMA opened
      afterwards found no trouble; or a sealed cable with a confirmed RMA.

    Exposure: every placement's time in a cage (to its removal, or ``now``), and every sealed
    cable's time in service (install date to retirement, or today).
    """
    data = CohortData()
    models = {
        mid: (vendor, part, ff)
        for mid, vendor, part, ff in TransceiverModel.objects.values_list(
            "pk", "vendor__name", "part_number", "form_factor"
        )
    }

    def module_key(site, model_id, date_code) -> Key:
        vendor, part, ff = models.get(model_id, ("(unknown)", "(unknown)", ""))
        lot = lot_of(date_code)
        data.lots[(model_id, date_code or "")] = (vendor, lot)
        return (site or NO_SITE, vendor or "(unknown)", part or "(unknown)", ff or "", lot)

    _add_placed_modules(data, module_key, now=now)
    _add_unplaced_module_failures(data, module_key)
    _add_sealed_cables(data, today=now.date())
    _add_spares(data)
    return data


def _add_placed_modules(data: CohortData, module_key: ModuleKey, *, now: datetime) -> None:
    """The modules' installed base, exposure and failed placements (one pass, ``_module_cells``)."""
    with heavy_queries():
        cells = _module_cells(now=now)
    for site, model_id, date_code, inst, expo_s, fail, open_at in cells:
        key = module_key(site, model_id, date_code)
        if inst:
            data.installed[key] += int(inst)
            data.module_installed[(model_id, date_code or "")] += int(inst)
        if open_at is not None:
            if isinstance(open_at, str):  # SQLite hands back text
                open_at = datetime.fromisoformat(open_at)
            if timezone.is_naive(open_at):
                open_at = timezone.make_aware(open_at, UTC)
            if data.oldest_install is None or open_at < data.oldest_install:
                data.oldest_install = open_at
        if expo_s:
            data.exposure_years[key] += float(expo_s) / 86400.0 / 365.0
        if fail:
            data.failures[key] += int(fail)


def _add_unplaced_module_failures(data: CohortData, module_key: ModuleKey) -> None:
    """Modules that failed outside any placement (dead on arrival, or recorded failed directly):
    a small, indexed set (``xcvr_status_not_installed``)."""
    any_failed_placement = Exists(
        TransceiverPlacement.objects.filter(transceiver_id=OuterRef("pk"), end_reason=PlacementEnd.FAILED)
    )
    confirmed_rma = Exists(
        RmaCase.objects.filter(transceiver_id=OuterRef("pk"), outcome=RmaOutcome.CONFIRMED)
    )
    for site, model_id, date_code, n in (
        Transceiver.objects.exclude(status=TransceiverStatus.INSTALLED)
        .filter((Q(confirmed_rma) | Q(status=TransceiverStatus.FAILED)) & ~Q(any_failed_placement))
        .values_list("stock_site__name", "model_id", "date_code")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[module_key(site, model_id, date_code)] += n
    # An installed module with a confirmed RMA and no failed placement (rare: an RMA recorded
    # against a module still in a cage) counts too, keyed like the module's other failures.
    for site, model_id, date_code, n in (
        Transceiver.objects.filter(
            status=TransceiverStatus.INSTALLED,
            pk__in=RmaCase.objects.filter(outcome=RmaOutcome.CONFIRMED).values("transceiver_id"),
        )
        .filter(~Q(any_failed_placement))
        .values_list("stock_site__name", "model_id", "date_code")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[module_key(site, model_id, date_code)] += n


def _add_sealed_cables(data: CohortData, *, today: date) -> None:
    """Sealed cables (DAC/ACC/AOC): installed, time in service and failures; small tables,
    grouped in the database."""
    sealed = Cable.objects.filter(kind__in=CableKind.sealed())
    cable_site = Coalesce(
        F("ends__cage__device__rack__row__room__site__name"),
        F("ends__port__device__rack__row__room__site__name"),
    )
    cable_key = {
        "k_site": cable_site,
        "k_vendor": F("vendor__name"),
        "k_part": F("part_number"),
        "k_ff": F("kind"),
    }
    for r in (
        sealed.filter(status__in=_CABLE_IN_SERVICE, ends__side="A", ends__leg=0)
        .values(**cable_key, k_lot=F("lot"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.installed[_key(r)] += r["n"]
    cable_span = ExpressionWrapper(
        Coalesce(TruncDate("retired_at"), Value(today, output_field=DateField())) - F("install_date"),
        output_field=DurationField(),
    )
    for r in (
        sealed.filter(install_date__isnull=False, install_date__lt=today, ends__side="A", ends__leg=0)
        .exclude(status=CableStatus.PLANNED)
        .values(**cable_key, k_lot=F("lot"))
        .annotate(t=Sum(cable_span))
        .order_by()
    ):
        data.exposure_years[_key(r)] += _years(r["t"])
    HistoricalCable = Cable.history.model
    faulty_rows = HistoricalCable.objects.filter(id=OuterRef("pk"), status=CableStatus.FAULTY)
    was_faulty = Exists(faulty_rows)
    last_faulty = Subquery(faulty_rows.order_by("-history_date").values("history_date")[:1])
    cable_confirmed = Exists(RmaCase.objects.filter(cable_id=OuterRef("pk"), outcome=RmaOutcome.CONFIRMED))
    # As for modules: an RMA opened after the cable was last marked faulty that came back
    # "no trouble found" clears that fault (a sealed cable is an inventory item like a module).
    cable_ntf = Exists(
        RmaCase.objects.filter(
            cable_id=OuterRef("pk"),
            outcome=RmaOutcome.NO_TROUBLE_FOUND,
            opened_at__gte=OuterRef("last_faulty"),
        )
    )
    for r in (
        sealed.filter(ends__side="A", ends__leg=0)
        .annotate(last_faulty=last_faulty)
        .filter((Q(status=CableStatus.RETIRED) & Q(was_faulty) & ~Q(cable_ntf)) | Q(cable_confirmed))
        .values(**cable_key, k_lot=F("lot"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[_key(r)] += r["n"]


def _add_spares(data: CohortData) -> None:
    """Spares on hand, per site and part number."""
    for r in (
        Transceiver.objects.filter(status=TransceiverStatus.SPARE)
        .values(k_site=F("stock_site__name"), k_part=F("model__part_number"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.spares_on_hand[(r["k_site"] or NO_SITE, r["k_part"])] += r["n"]
