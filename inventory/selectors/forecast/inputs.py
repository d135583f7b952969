"""Read what the forecast needs, with set-based aggregate queries only.

Items that fail like modules: transceivers, and sealed cables (DAC/ACC/AOC). Each cohort
cell is (site, vendor, part number, form factor, date-code lot); every query here groups by
that key in the database and returns one row per cell, never one per item. The modules'
installed base, exposure and failed placements come from ONE pass (raw SQL grouped by small
integer keys; names are joined on afterwards in Python over a few thousand cells).

Link risk: every active link is scored from its end modules' cohort hazards and age (the
same age factor as ``forecast.risk``). When one or two cohorts stand out, the database scores
only the links touching them and proves no other link can enter the top (``link_features``);
otherwise four narrow columnar reads (modules, open placements, links, ports; one statement,
rows packed into one bytea each) are joined and scored in numpy, and the top candidates plus
the links with evidence (alerts, thin margins, FEC/DOM trends) are ranked with the full model.

PostgreSQL runs the heavy statements with a larger ``work_mem`` (hash joins of a million rows
stay in memory) and without JIT compilation (it costs more than it saves here), set per
transaction. The SQL is portable to SQLite (the embedded default).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from django.apps import apps
from django.db import connection, transaction
from django.db.models import (
    Avg,
    Count,
    DateField,
    DurationField,
    Exists,
    ExpressionWrapper,
    F,
    Min,
    OuterRef,
    Q,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from inventory.core.choices import (
    SEVERITY_ORDER,
    AlertState,
    CableKind,
    CableStatus,
    PlacementEnd,
    RmaOutcome,
    Severity,
    TransceiverStatus,
)
from inventory.core.forecast.risk import RiskInputs, RiskWeights, age_factor, age_factor_sql, max_age_factor
from inventory.models import (
    Alert,
    Cable,
    CableTest,
    Link,
    PortRollup,
    RmaCase,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
)

Key = tuple[str, str, str, str, str]  # site, vendor, part number, form factor, lot
NO_SITE = "(no site)"

_SITE = "cage__device__rack__row__room__site__name"


def lot_of(date_code: str | None) -> str:
    dc = date_code or ""
    return dc[:4] if len(dc) >= 6 and dc[:6].isdigit() else dc


_XCVR_KEY = {
    "k_vendor": F("model__vendor__name"),
    "k_part": F("model__part_number"),
    "k_ff": F("model__form_factor"),
    "k_lot": F("date_code"),
}
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


@contextmanager
def _heavy_queries():
    """Per-transaction settings for the million-row aggregates (PostgreSQL only)."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SET LOCAL work_mem = '256MB'")
                cur.execute("SET LOCAL jit = off")
        yield


def _tables(*names: str) -> dict[str, str]:
    return {m: apps.get_model("inventory", m)._meta.db_table for m in names}


def _module_cells(*, now: datetime) -> list[tuple]:
    """(site name, model id, date code, installed, exposure seconds, failures) per cell.

    One pass over modules and their placements (a module without placements is one row):
    installed is a module with status ``installed`` in a cage, counted on its open placement
    (or its only row when it has no placement history, as imported modules have); exposure is
    every placement's time to its removal or ``now``; a ``failed`` end is a failure unless an
    RMA opened afterwards found no trouble. Joined once to the cage's site, grouped by integer
    keys.
    """
    t = _tables(
        "Transceiver", "TransceiverPlacement", "Cage", "Device", "Rack", "Row", "Room", "Site", "RmaCase"
    )
    sql = f"""
        SELECT s.name, i.model_id, i.date_code, SUM(i.inst), SUM(i.expo), SUM(i.fail), MIN(i.open_at)
        FROM (
            SELECT COALESCE(p.cage_id, x.cage_id) AS cage_id, x.model_id, x.date_code,
                   CASE WHEN x.status = %(installed)s AND x.cage_id IS NOT NULL
                             AND (p.id IS NULL OR p.removed_at IS NULL) THEN 1 ELSE 0 END AS inst,
                   CASE WHEN p.id IS NULL THEN 0.0
                        ELSE COALESCE({_epoch("p.removed_at")}, %(now_s)s) - {_epoch("p.installed_at")}
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
    """.format(
        **t,
        # A plain timestamp comparison on PostgreSQL; SQLite compares seconds.
        before_now="p.installed_at < %(now)s"
        if connection.vendor == "postgresql"
        else f"{_epoch('p.installed_at')} < %(now_s)s",
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


def cohort_data(*, now: datetime) -> CohortData:
    """Installed base, confirmed failures, exposure and spares, grouped per cohort cell.

    Confirmed failures:

    * a placement that ended ``failed``, unless an RMA opened afterwards found no trouble;
    * a confirmed RMA on a module that has no failed placement (failed before installation);
    * a module with status ``failed`` and neither of the above (recorded failed directly);
    * a sealed cable (DAC/ACC/AOC) retired after being marked faulty, or with a confirmed RMA.

    Exposure: every placement's time in a cage (to its removal, or ``now``), and every sealed
    cable's time in service (install date to retirement, or today).
    """
    data = CohortData()
    today = now.date()
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

    with _heavy_queries():
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

    # Modules that failed outside any placement (dead on arrival, or recorded failed directly):
    # a small, indexed set (``xcvr_status_not_installed``).
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

    # Sealed cables (DAC/ACC/AOC): small tables, grouped in the database.
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
    was_faulty = Exists(HistoricalCable.objects.filter(id=OuterRef("pk"), status=CableStatus.FAULTY))
    cable_confirmed = Exists(RmaCase.objects.filter(cable_id=OuterRef("pk"), outcome=RmaOutcome.CONFIRMED))
    for r in (
        sealed.filter(ends__side="A", ends__leg=0)
        .filter((Q(status=CableStatus.RETIRED) & Q(was_faulty)) | Q(cable_confirmed))
        .values(**cable_key, k_lot=F("lot"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.failures[_key(r)] += r["n"]

    # Spares on hand, per site and part number.
    for r in (
        Transceiver.objects.filter(status=TransceiverStatus.SPARE)
        .values(k_site=F("stock_site__name"), k_part=F("model__part_number"))
        .annotate(n=Count("pk"))
        .order_by()
    ):
        data.spares_on_hand[(r["k_site"] or NO_SITE, r["k_part"])] += r["n"]
    return data


# --- link risk features -------------------------------------------------------------------

# The risk model has one top alert level, "page/critical": a page counts as a critical there.
_TOP_ALERT_LEVEL = SEVERITY_ORDER[Severity.CRITICAL]
FEC_RULES = ("fec_degradation", "fec_tail", "fec_uncorrectable")
DOM_RULES = ("rx_power_drift",)


@dataclass
class LinkFeatures:
    """Arrays over the candidate links (the top scored and every link with evidence)."""

    link_ids: np.ndarray
    base_hazard: np.ndarray  # failures per link-year from the end modules' cohorts
    age_days: np.ndarray
    open_alert_level: np.ndarray
    past_alerts: np.ndarray
    min_margin_db: np.ndarray
    fec_ratio: np.ndarray
    dom_drift_db: np.ndarray
    considered: int  # every active link was scored
    pruned: bool = False  # the threshold fast path decided (only hot links were scored)

    def risk_inputs(self) -> RiskInputs:
        """The ranking's inputs (``forecast.risk.rank_links``): the same arrays."""
        return RiskInputs(**{f: getattr(self, f) for f in RiskInputs.__dataclass_fields__})


def _epoch(col: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM {col})::float8"
    return f"CAST(strftime('%%s', {col}) AS REAL)"


def _hazard_rows(p: str = "hz") -> str:
    """A derived table (model_id, date_code, h) from the ``<p>_*`` parameters: typed arrays on
    PostgreSQL (``unnest``), a JSON list of triples on SQLite (``json_each``).

    On PostgreSQL the keys are grouped (they are unique already): a function scan has no
    statistics, so the planner otherwise assumes few distinct keys and hashes the MILLION-row
    side of the join instead of these few thousand rows (twice as slow at 1M modules)."""
    if connection.vendor == "postgresql":
        return (
            f"(SELECT model_id, date_code, MAX(h) AS h FROM unnest(%({p}_m)s::bigint[], %({p}_d)s::text[],"
            f" %({p}_h)s::float8[]) AS hz(model_id, date_code, h) GROUP BY model_id, date_code)"
        )
    return (
        "(SELECT json_extract(value, '$[0]') AS model_id, json_extract(value, '$[1]') AS date_code, "
        f"json_extract(value, '$[2]') AS h FROM json_each(%({p}_json)s))"
    )


def _hazard_params(module_hazard: dict[tuple[int, str], float], p: str = "hz") -> dict:
    items = list(module_hazard.items())
    if connection.vendor == "postgresql":
        return {
            f"{p}_m": [k[0] for k, _ in items],
            f"{p}_d": [k[1] for k, _ in items],
            f"{p}_h": [float(h) for _, h in items],
        }
    return {f"{p}_json": json.dumps([[k[0], k[1], float(h)] for k, h in items])}


def _hot_links_sql() -> str:
    """Active links with a module of a ``hot`` cohort at either end (indexed walk from the
    modules: cage -> ports -> links)."""
    t = _tables("Link", "Port", "Transceiver")
    return f"""
        SELECT DISTINCT l.id FROM {_hazard_rows("hot")} h
        JOIN {{Transceiver}} x ON x.model_id = h.model_id AND x.date_code = h.date_code
        JOIN {{Port}} p ON p.cage_id = x.cage_id
        JOIN {{Link}} l ON (l.a_port_id = p.id OR l.b_port_id = p.id) AND l.active
    """.format(**t)  # noqa: S608 - table names from model meta


def _id_in(col: str, param: str) -> str:
    if connection.vendor == "postgresql":
        return f"{col} = ANY(%({param})s)"
    return f"{col} IN (SELECT value FROM json_each(%({param})s))"


def _fence() -> str:
    """Keeps the planner from inlining a subquery (so its columns are computed once per row)."""
    return " OFFSET 0" if connection.vendor == "postgresql" else " LIMIT -1 OFFSET 0"


def _link_scores_sql(*, where: str, tail: str, weights: RiskWeights) -> str:
    """Every active link's base hazard (both end modules' cohort hazards) and the install time
    of its older module, scored ``base * age factor`` (evidence factors are all >= 1, so the
    top links by this score plus every link with evidence contain the true top links)."""
    t = _tables("Link", "Port", "Transceiver", "TransceiverPlacement")
    ends = ""
    for s in "ab":
        ends += f"""
            LEFT JOIN {{Transceiver}} x{s} ON x{s}.cage_id = p{s}.cage_id
            LEFT JOIN {{TransceiverPlacement}} t{s}
                   ON t{s}.transceiver_id = x{s}.id AND t{s}.removed_at IS NULL
            LEFT JOIN {_hazard_rows()} h{s}
                   ON h{s}.model_id = x{s}.model_id AND h{s}.date_code = x{s}.date_code
        """
    return f"""
        SELECT id, base, inst FROM (
            SELECT id, base, inst, (%(now_s)s - inst) / 86400.0 AS age FROM (
                SELECT id,
                       CASE WHEN ha + hb > 0 THEN ha + hb ELSE %(prior)s END AS base,
                       {_epoch("CASE WHEN ia IS NULL THEN ib WHEN ib IS NULL THEN ia WHEN ia < ib THEN ia ELSE ib END")} AS inst
                FROM (
                    SELECT l.id,
                           CASE WHEN xa.id IS NULL THEN 0.0 ELSE COALESCE(ha.h, %(prior)s) END AS ha,
                           CASE WHEN xb.id IS NULL THEN 0.0 ELSE COALESCE(hb.h, %(prior)s) END AS hb,
                           ta.installed_at AS ia,
                           tb.installed_at AS ib
                    FROM {{Link}} l
                    JOIN {{Port}} pa ON pa.id = l.a_port_id
                    JOIN {{Port}} pb ON pb.id = l.b_port_id
                    {ends}
                    WHERE l.active AND {where}
                ) e {_fence()}
            ) q {_fence()}
        ) r
        {tail.replace("{score}", f"base * {age_factor_sql('age', weights)}")}
    """.format(**t)  # noqa: S608 - table names from model meta, values are parameters


def _columns(cur, queries: list[tuple[str, str]], params: dict, id_tables: tuple[str, ...] = ()):
    """The columns of several queries' results as numpy arrays: ``[[col, ...], ...]``.

    Each query comes with ``kinds``, one letter per column: ``i`` (an id: int64, NULL -> -1)
    or ``f`` (float64, NULL -> NaN). On PostgreSQL every row is packed into fixed-width binary
    (``int4send``/``int8send``, ``float8send``) and ``string_agg`` joins a query's rows into ONE
    bytea, which ``np.frombuffer`` reads as a record array: a million rows cross as a single
    value, with no Python object per row, and every query goes in ONE statement (one round
    trip). Ids travel as 4 bytes when the largest id of ``id_tables`` fits (else 8): both
    packings are in the statement, and a one-time filter skips the one not needed. SQLite
    (small, embedded installs) fetches the rows, one query each.
    """
    if connection.vendor != "postgresql":
        out = []
        for sql, kinds in queries:
            cur.execute(sql, params)
            arr = np.array(cur.fetchall(), dtype=float).reshape(-1, len(kinds))  # None -> NaN
            out.append(
                [
                    arr[:, j] if k == "f" else np.nan_to_num(arr[:, j], nan=-1).astype(np.int64)
                    for j, k in enumerate(kinds)
                ]
            )
        return out
    maxes = ", ".join(f"(SELECT MAX(id) FROM {table})" for table in id_tables)  # noqa: S608
    fits = f"(SELECT GREATEST({maxes}, 0) < 2147483647)" if id_tables else "FALSE"
    send = {
        4: {"i": "int4send(COALESCE({}, -1)::int4)", "f": "float8send(COALESCE({}::float8, 'NaN'))"},
        8: {"i": "int8send(COALESCE({}, -1)::int8)", "f": "float8send(COALESCE({}::float8, 'NaN'))"},
    }
    parts = [fits]
    for sql, kinds in queries:
        names = [f"c{n}" for n in range(len(kinds))]
        cols = ", ".join(names)
        for width, gate in ((4, fits), (8, f"NOT {fits}")):
            packed = " || ".join(send[width][k].format(c) for c, k in zip(names, kinds, strict=True))
            parts.append(f"(SELECT string_agg({packed}, ''::bytea) FROM ({sql}) AS s({cols}) WHERE {gate})")
    cur.execute("SELECT " + ",\n".join(parts), params)  # noqa: S608 - parts are SQL from this module
    row = cur.fetchone()
    width = 4 if row[0] else 8
    out = []
    for q, (_, kinds) in enumerate(queries):
        buf = row[1 + 2 * q + (0 if width == 4 else 1)] or b""
        names = [f"c{n}" for n in range(len(kinds))]
        dtype = np.dtype(
            [(c, f">i{width}" if k == "i" else ">f8") for c, k in zip(names, kinds, strict=True)]
        )
        rec = np.frombuffer(buf, dtype=dtype)
        out.append(
            [rec[c].astype(np.float64 if k == "f" else np.int64) for c, k in zip(names, kinds, strict=True)]
        )
    return out


def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray, missing) -> np.ndarray:
    """``values[keys == q]`` for every ``q`` of ``query`` (``keys`` unique), ``missing`` where
    absent: a join on integer ids in numpy. A dense table when the ids are compact (the usual
    case: sequence-made ids), else a sorted search."""
    out = np.full(len(query), missing, dtype=np.result_type(values.dtype, np.asarray(missing).dtype))
    if len(keys) == 0 or len(query) == 0:
        return out
    top = int(keys.max())
    if keys.min() >= 0 and top <= 4 * len(keys) + 1_000_000:
        table = np.full(top + 1, missing, dtype=out.dtype)
        table[keys] = values
        ok = (query >= 0) & (query <= top)
        out[ok] = table[query[ok]]
        return out
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    pos = np.clip(np.searchsorted(sk, query), 0, len(sk) - 1)
    hit = sk[pos] == query
    out[hit] = values[order][pos[hit]]
    return out


def _score_every_link(cur, params: dict, weights: RiskWeights, k: int, ev_ids: set[int], now: datetime, lap):
    """Score every active link (``base * age factor``) in numpy; return the best ``k`` (ties by
    link id) and the links with evidence as ``(id, base, install epoch)`` rows, and the count.

    Four narrow reads (one statement) instead of one wide join: each installed module once
    (its cage and cohort hazard), the open placements' install times, the links' port ids and
    the ports' cages. numpy joins them by id (``_lookup``), so no module table is joined once
    per link end, and nothing but a few columns of integers and floats leaves the database.
    """
    t = _tables("Link", "Port", "Transceiver", "TransceiverPlacement", "Cage")
    modules, placements, links, ports = _columns(
        cur,
        [
            (
                f"""
                SELECT x.id, x.cage_id, COALESCE(h.h, %(prior)s) FROM {t["Transceiver"]} x
                LEFT JOIN {_hazard_rows()} h ON h.model_id = x.model_id AND h.date_code = x.date_code
                WHERE x.cage_id IS NOT NULL
                """,
                "iif",
            ),
            (
                f"SELECT transceiver_id, {_epoch('installed_at')} FROM {t['TransceiverPlacement']}"
                " WHERE removed_at IS NULL",
                "if",
            ),
            (f"SELECT id, a_port_id, b_port_id FROM {t['Link']} WHERE active", "iii"),
            (f"SELECT id, cage_id FROM {t['Port']} WHERE cage_id IS NOT NULL", "ii"),
        ],  # noqa: S608 - table names from model meta, values are parameters
        params,
        id_tables=(t["Transceiver"], t["Link"], t["Port"], t["Cage"]),
    )
    lap("risk.full_scan.read")
    xid, cage, hz = modules
    inst = _lookup(*placements, xid, np.nan)  # the module's open placement, if any
    lid, a_port, b_port = links
    port, port_cage = ports
    n = len(lid)
    ends = [_lookup(port, port_cage, p, -1) for p in (a_port, b_port)]
    base = _lookup(cage, hz, ends[0], 0.0) + _lookup(cage, hz, ends[1], 0.0)
    base = np.where(base > 0, base, float(params["prior"]))
    installed = np.fmin(_lookup(cage, inst, ends[0], np.nan), _lookup(cage, inst, ends[1], np.nan))
    score = base * age_factor((params["now_s"] - installed) / 86400.0, weights)
    k = min(k, n)
    if 0 < k < n:
        cut = -np.partition(-score, k - 1)[k - 1]
        idx = np.flatnonzero(score >= cut)  # every tie with the k-th: the id decides below
    else:
        idx = np.arange(n)
    idx = idx[np.lexsort((lid[idx], -score[idx]))][:k]
    if ev_ids:
        pos = _lookup(lid, np.arange(n), np.fromiter(ev_ids, dtype=np.int64, count=len(ev_ids)), -1)
        idx = np.union1d(idx, pos[pos >= 0])
    rows = [
        (i, b, None if np.isnan(e) else e)
        for i, b, e in zip(lid[idx].tolist(), base[idx].tolist(), installed[idx].tolist(), strict=True)
    ]
    lap("risk.full_scan.numpy")
    return rows, n


def telemetry_trends(*, now: datetime, recent_hours: int = 24, baseline_days: int = 7) -> dict[int, tuple]:
    """FEC and DOM trends per link from the telemetry rollups (``PortRollup``), set-based.

    Per port: the corrected-codeword rate of the last ``recent_hours`` over the rate of the
    ``baseline_days`` before (the FEC trend), and the lowest receive power of the recent window
    against the baseline's average lowest (the DOM drift, dB, negative when it fell). Grouped by
    link in the database (both ends), worst end kept. Returns {link id: (fec ratio, drift dB)}.
    """
    recent_from = now - timedelta(hours=recent_hours)
    base_from = recent_from - timedelta(days=baseline_days)
    recent = Q(bucket__gte=recent_from, bucket__lte=now)
    base = Q(bucket__gte=base_from, bucket__lt=recent_from)
    out: dict[int, tuple] = {}
    for side in ("links_a", "links_b"):
        rows = (
            PortRollup.objects.filter(
                bucket__gte=base_from, bucket__lte=now, **{f"port__{side}__active": True}
            )
            .values(lid=F(f"port__{side}__id"))
            .annotate(
                cw_r=Sum("fec_corrected_cw", filter=recent),
                s_r=Sum("covered_s", filter=recent & Q(fec_corrected_cw__isnull=False)),
                cw_b=Sum("fec_corrected_cw", filter=base),
                s_b=Sum("covered_s", filter=base & Q(fec_corrected_cw__isnull=False)),
                rx_r=Min("rx_power_min_any_dbm", filter=recent),
                rx_b=Avg("rx_power_min_any_dbm", filter=base),
            )
            .order_by()
        )
        for r in rows:
            ratio = drift = np.nan
            if r["s_r"] and r["s_b"] and r["cw_b"] is not None and r["cw_r"] is not None:
                rate_b = r["cw_b"] / r["s_b"]
                rate_r = r["cw_r"] / r["s_r"]
                ratio = rate_r / rate_b if rate_b > 0 else (np.inf if rate_r > 0 else 1.0)
            if r["rx_r"] is not None and r["rx_b"] is not None:
                drift = r["rx_r"] - r["rx_b"]
            old = out.get(r["lid"], (np.nan, np.nan))
            out[r["lid"]] = (
                np.fmax(old[0], ratio),
                drift if np.isnan(old[1]) or abs(drift) > abs(old[1]) else old[1],
            )
    return out


@dataclass
class LinkEvidence:
    """Per link id, only for links with something to say (alerts, thin margins, trends)."""

    open_level: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    past: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    margin: dict[int, float] = field(default_factory=dict)
    fec: dict[int, float] = field(default_factory=dict)
    dom: dict[int, float] = field(default_factory=dict)

    def ids(self) -> set[int]:
        return set(self.open_level) | set(self.past) | set(self.margin) | set(self.fec) | set(self.dom)


def link_evidence(*, now: datetime, lookback_days: int = 365, margin_below_db: float = 0.5) -> LinkEvidence:
    """Alerts (open, and past within ``lookback_days``), thin test margins and telemetry trends,
    keyed by link: small sets, each gathered with one query."""
    ev = LinkEvidence()
    since = now - timedelta(days=lookback_days)
    # Alerts name the link directly, or a cable on its path.
    alerts = Alert.objects.filter(Q(state=AlertState.OPEN) | Q(opened_at__gte=since)).filter(silenced=False)
    by_link = list(
        alerts.filter(link__isnull=False).values_list("link_id", "rule", "severity", "state", "evidence")
    )
    by_cable = list(
        alerts.filter(link__isnull=True, cable__isnull=False).values_list(
            "cable__link_segments__link_id", "rule", "severity", "state", "evidence"
        )
    )
    for lid, rule, sev, state, evidence in by_link + by_cable:
        if lid is None:
            continue
        level = min(SEVERITY_ORDER.get(sev, 1), _TOP_ALERT_LEVEL)
        evidence = evidence if isinstance(evidence, dict) else {}
        if state == AlertState.OPEN:
            ev.open_level[lid] = max(ev.open_level[lid], level)
        else:
            ev.past[lid] += 1
        if rule in FEC_RULES:
            ratio = float(
                evidence.get("ratio") or (10.0 if level >= 3 else 3.0 if state == AlertState.OPEN else 1.0)
            )
            ev.fec[lid] = max(ev.fec.get(lid, ratio), ratio)
        if rule in DOM_RULES:
            drift = float(
                evidence.get("drift_db") or (2.0 if level >= 3 else 1.0 if state == AlertState.OPEN else 0.0)
            )
            ev.dom[lid] = drift if lid not in ev.dom else max(ev.dom[lid], abs(drift))

    for lid, (ratio, drift) in telemetry_trends(now=now).items():
        if not np.isnan(ratio):
            ratio = min(float(ratio), 1e6)
            ev.fec[lid] = max(ev.fec.get(lid, ratio), ratio)
        if not np.isnan(drift):
            old = ev.dom.get(lid)
            ev.dom[lid] = float(drift) if old is None or abs(drift) > abs(old) else old

    # Thin margins: the worst recent test on any cable of the path (only the thin ones travel).
    for lid, m in (
        CableTest.objects.filter(tested_at__gte=since, margin_db__lt=margin_below_db)
        .values_list("cable__link_segments__link_id")
        .annotate(m=Min("margin_db"))
        .order_by()
    ):
        if lid is not None:
            ev.margin[lid] = min(ev.margin.get(lid, m), m)
    return ev


# The fast path is tried only when its hottest cohort's hazard is at least this many times any
# cohort left out (or the default). Exactness does not depend on it (the proof decides); it only saves
# a wasted attempt on a fleet where nothing stands out: at 1M modules a failed attempt cost
# ~1.7 s on top of the ~2.3 s full scan.
STANDOUT = 1.5


def _hot_cohorts(
    module_hazard: dict[tuple[int, str], float], module_installed: dict[tuple[int, str], int], budget: int
) -> tuple[dict[tuple[int, str], float], float]:
    """The highest-hazard cohorts holding at most ``budget`` installed modules, and the hazard
    of the best cohort left out (every module outside the set is at or below it)."""
    ranked = sorted(module_hazard.items(), key=lambda kv: -kv[1])
    hot: dict[tuple[int, str], float] = {}
    total, i = 0, 0
    while i < len(ranked):
        j = i  # cohorts of equal hazard go in together or not at all
        while j < len(ranked) and ranked[j][1] == ranked[i][1]:
            j += 1
        group = ranked[i:j]
        n = sum(module_installed.get(key, 0) for key, _ in group)
        if total + n > budget:
            return hot, ranked[i][1]
        hot.update(group)
        total += n
        i = j
    return hot, 0.0


def link_features(
    *,
    now: datetime,
    module_hazard: dict[tuple[int, str], float],
    default_hazard: float,
    top: int,
    weights: RiskWeights | None = None,
    evidence: LinkEvidence | None = None,
    module_installed: dict[tuple[int, str], int] | None = None,
    oldest_install: datetime | None = None,
    prune_budget: int | None = None,
    timings: dict[str, float] | None = None,
) -> LinkFeatures:
    """Risk inputs for the links that can make the top ``top``, and how many links were ranked.

    A link's hazard is its base (both end modules' cohort hazards; unknown cohorts get
    ``default_hazard``) times the age factor times evidence factors that are all >= 1. So the
    top links by ``base * age`` plus every link with evidence contain the true top links, and
    only those leave the database:

    * fast path (threshold pruning, exact): score only links touching the hottest cohorts
      (``module_installed`` bounds their size); accepted when the ``top``-th score beats the
      best any other link could reach (``2 * max(next cohort hazard, default) * max age
      factor``, the oldest open placement bounding age);
      tried only when the hottest cohort's hazard is ``STANDOUT`` times any cohort left out;
    * otherwise every active link is scored (``_score_every_link``) and the best
      ``2 * top + 16`` kept.

    ``prune_budget``: the most modules the fast path may start from (default: 2,000, then
    20,000). ``timings``, when given, receives seconds per step (``risk.*``, for the bench).
    """
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + time.perf_counter() - clock
        clock = time.perf_counter()

    w = weights or RiskWeights()
    ev = evidence if evidence is not None else link_evidence(now=now)
    lap("risk.evidence")
    k = 2 * top + 16
    params = {
        **_hazard_params(module_hazard),
        "prior": float(default_hazard),
        "now_s": now.timestamp(),
        "k": k,
    }
    ev_ids = set(ev.ids())
    rows, pruned = None, False

    def by_ids(ids: list[int]) -> list[tuple]:
        if not ids:
            return []
        params["ids"] = ids if connection.vendor == "postgresql" else json.dumps(ids)
        cur.execute(_link_scores_sql(where=_id_in("l.id", "ids"), tail="", weights=w), params)
        return cur.fetchall()

    with _heavy_queries(), connection.cursor() as cur:
        if module_installed and oldest_install is not None and top > 0:
            oldest_days = (now - oldest_install).total_seconds() / 86400.0
            f_max = max_age_factor(oldest_days, w)
            # A small hot set first (cheap when one lot stands out), then a larger one.
            budgets = (
                (prune_budget,) if prune_budget is not None else (max(2_000, 4 * k), max(20_000, 20 * k))
            )
            tried: set | None = None
            for budget in budgets:
                hot, next_h = _hot_cohorts(module_hazard, module_installed, budget)
                if not hot or next_h <= 0 or set(hot) == tried:
                    continue
                if max(hot.values()) < STANDOUT * max(next_h, float(default_hazard)):
                    continue  # nothing stands out: the proof would likely fail, scan instead
                tried = set(hot)
                params.update(_hazard_params(hot, "hot"))
                cur.execute(_hot_links_sql(), params)
                hot_ids = {r[0] for r in cur.fetchall()}
                if len(hot_ids) < top:
                    continue
                cand = by_ids(sorted(hot_ids | ev_ids))
                hot_rows = [r for r in cand if r[0] in hot_ids]
                inst = np.array([np.nan if r[2] is None else float(r[2]) for r in hot_rows])
                scores = np.array([float(r[1]) for r in hot_rows]) * age_factor(
                    (now.timestamp() - inst) / 86400.0, w
                )
                nth = float(np.sort(scores)[::-1][top - 1])
                if nth > 2.0 * max(next_h, float(default_hazard)) * f_max:
                    rows, pruned = cand, True
                    break
        lap("risk.pruned_path")
        if rows is None:
            rows, considered = _score_every_link(cur, params, w, k, ev_ids, now, lap)
        else:
            cur.execute(f"SELECT COUNT(*) FROM {_tables('Link')['Link']} WHERE active")  # noqa: S608
            considered = cur.fetchone()[0]
    by_id = {r[0]: r for r in rows}
    ids = np.array(sorted(by_id), dtype=np.int64)
    n = len(ids)
    base = np.array([float(by_id[i][1]) for i in ids.tolist()], dtype=float)
    inst = np.array(
        [np.nan if by_id[i][2] is None else float(by_id[i][2]) for i in ids.tolist()], dtype=float
    )
    age = (now.timestamp() - inst) / 86400.0

    def arr(d: dict, fill: float) -> np.ndarray:
        out = np.full(n, fill, dtype=float)
        for i, lid in enumerate(ids.tolist()):
            v = d.get(lid)
            if v is not None:
                out[i] = v
        return out

    lap("risk.features")
    return LinkFeatures(
        link_ids=ids,
        base_hazard=base,
        age_days=age,
        open_alert_level=arr(ev.open_level, 0).astype(np.int64),
        past_alerts=arr(ev.past, 0.0),
        min_margin_db=arr(ev.margin, np.nan),
        fec_ratio=arr(ev.fec, np.nan),
        dom_drift_db=arr(ev.dom, np.nan),
        considered=int(considered),
        pruned=pruned,
    )


def link_labels(link_ids: list[int]) -> dict[int, dict]:
    """Names for the links shown (one query)."""
    out = {}
    for lid, ad, ap, bd, bp, pmd, lc in Link.objects.filter(pk__in=link_ids).values_list(
        "pk",
        "a_port__device__name",
        "a_port__name",
        "b_port__device__name",
        "b_port__name",
        "pmd",
        "link_class",
    ):
        out[lid] = {"a": f"{ad}:{ap}", "b": f"{bd}:{bp}", "pmd": pmd, "link_class": lc}
    return out


__all__ = [
    "CohortData",
    "LinkFeatures",
    "cohort_data",
    "failed_placements",
    "LinkEvidence",
    "link_evidence",
    "link_features",
    "link_labels",
]
