# ruff: noqa: S608 - every statement here is built from model _meta names (quoted) and placeholders
"""Retest due dates decided in SQL, a batch of cables per statement (PostgreSQL and SQLite).

Why SQL and not the rules in :mod:`inventory.core.retest_rules` for every cable
--------------------------------------------------------------------------------
Deciding each cable in Python costs about 0.7 ms (loading its facts as Python objects, then the
rules): 376 s for the 557K cables of a 131,072-GPU site. Almost every cable takes the common
path, which SQL expresses directly:

* planned or retired: no date;
* never passed a qualifying test: install date (or the day the record was made) plus
  ``new_install_days``;
* otherwise the last qualifying pass plus the interval of the cable's policy (site, medium and
  link class resolved by :class:`~inventory.core.retest_rules.PolicyResolver` into a small
  table of keys, joined here);
* brought forward to the first trigger after that pass (failed test, fault, re-seat, loss
  increase on the cable or a link over it) plus ``shorten_days``;
* where telemetry is accepted and the cable is live with no alert ever opened on it or its
  links, rolled forward whole intervals past the reminder horizon (the loop of the rules,
  solved as a division).

The one case left to the Python rules is a live cable, under a policy that accepts telemetry,
whose date is within the horizon and that has had alerts (none open): whether each interval was
clean needs the alert dates one by one. The statement flags those rows (``py = 1``) and the
service decides them with the rules. Both paths are compared on a varied plant by
``tests/inventory/services/retests/test_retest_due_sets.py`` on both databases.

Dates are computed as the rules compute them: the last pass is a date in the current time zone
(as ``TruncDate``), a trigger's day is its UTC date (``datetime.date()`` of what the database
returns), and every addition is held to 0001-01-01 .. 9999-12-31 like ``add_days``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.db import connection
from django.utils import timezone

from inventory.core import retest_rules as rules
from inventory.core.choices import PASSING, AlertRule, CableStatus, FieldNoteKind, Verdict
from inventory.models import (
    Alert,
    Cable,
    CableEnd,
    CableTest,
    Cage,
    Device,
    FieldNote,
    Link,
    LinkSegment,
    Port,
    Rack,
    RetestTrigger,
    Room,
    Row,
)

# Field notes that bring a retest forward: faults reported, re-seats and cleanings done.
FIELD_TRIGGERS = (
    FieldNoteKind.FAULT,
    FieldNoteKind.RESEATED,
    FieldNoteKind.CLEANED,
    FieldNoteKind.RESEATED_CLEANED,
)
# the temporary table one batch is decided into (dropped at the end of the batch)
BATCH_TABLE = "retest_due_batch"
NO_SITE = 0  # the site key of a cable without a site, or of a site no policy names
DATE_MIN, DATE_MAX = date.min, date.max


@dataclass(frozen=True)
class PolicyTable:
    """The resolver flattened into rows: one per (site, medium, link class) key it tells apart.

    A site, medium or class that no rule names resolves like "any other" (key 0 or ''), so the
    table has (named sites + 1) x (named media + 1) x (named classes + 1) rows, a handful.
    """

    sites: tuple[int, ...]
    kinds: tuple[str, ...]
    classes: tuple[str, ...]
    rows: tuple[tuple[int, str, str, int, int, int], ...]


def policy_table(resolver: rules.PolicyResolver) -> PolicyTable:
    sites = tuple(sorted({r.site_id for r in resolver.rules if r.site_id is not None}))
    kinds = tuple(sorted({r.kind for r in resolver.rules if r.kind}))
    classes = tuple(sorted({r.link_class for r in resolver.rules if r.link_class}))
    rows = []
    for site in (NO_SITE, *sites):
        for kind in ("", *kinds):
            for cls in ("", *classes):
                p = resolver.resolve(site if site != NO_SITE else None, kind, (cls,) if cls else ())
                rows.append((site, kind, cls, p.interval_days, p.shorten_days, int(p.accept_telemetry)))
    return PolicyTable(sites, kinds, classes, tuple(rows))


def _t(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _c(model, field: str) -> str:
    return connection.ops.quote_name(model._meta.get_field(field).column)


class _Sql:
    """Positional parameters collected in the order the SQL text is built."""

    def __init__(self):
        self.params: list = []
        self.pg = connection.vendor == "postgresql"

    def p(self, value, cast: str = "") -> str:
        if not self.pg and isinstance(value, date):
            value = value.isoformat()
        self.params.append(value)
        return f"%s::{cast}" if (cast and self.pg) else "%s"

    def many(self, values) -> str:
        return ", ".join(self.p(v) for v in values)

    def day(self, expr: str, tzname: str) -> str:
        sql, params = connection.ops.datetime_cast_date_sql(expr, (), tzname)
        self.params.extend(params)
        return sql

    def add(self, day: str, days: str) -> str:
        if self.pg:
            return f"LEAST(GREATEST(({day}) + ({days}), DATE '0001-01-01'), DATE '9999-12-31')"
        lo, hi = DATE_MIN.toordinal() + 1721424.5, DATE_MAX.toordinal() + 1721424.5
        return f"date(MIN(MAX(julianday({day}) + ({days}), {lo}), {hi}))"

    def diff(self, a: str, b: str) -> str:
        return f"(({a}) - ({b}))" if self.pg else f"CAST(julianday({a}) - julianday({b}) AS INTEGER)"

    def least(self, a: str, b: str) -> str:
        return f"LEAST({a}, {b})" if self.pg else f"MIN({a}, {b})"


def decide_into_batch_table(
    *,
    lo: int,
    hi: int,
    ids: list[int] | None,
    table: PolicyTable,
    defaults: rules.Defaults,
    uses_telemetry: bool,
    today: date,
) -> str:
    """(Re)create ``BATCH_TABLE`` (id, due, py) for the cables in [lo, hi] (and in ``ids``).

    Returns nothing but the table's name; the caller writes from it and drops it.
    """
    s = _Sql()
    ctes, select = _decision(
        s, lo=lo, hi=hi, ids=ids, table=table, defaults=defaults, uses_telemetry=uses_telemetry, today=today
    )
    with connection.cursor() as cur:
        if s.pg:
            # The planner cannot see how few rows the per-cable aggregates keep, prices the plan
            # in millions and compiles it with JIT: 6.7 of 8.3 s for 50,000 cables went there.
            # For this transaction only (the caller's atomic block); the batch's sorts and
            # hashes in memory.
            cur.execute("SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true)")
        cur.execute(f"DROP TABLE IF EXISTS {BATCH_TABLE}")
        cur.execute(
            f"CREATE TEMPORARY TABLE {BATCH_TABLE} AS WITH {', '.join(ctes)} {select}",  # noqa: S608 - names from model _meta, quoted; values are placeholders
            s.params,
        )
    return BATCH_TABLE


FEW = 200  # given cables up to this many: decided and written by one statement (PostgreSQL)


def decide_and_write_few(
    *,
    ids: list[int],
    table: PolicyTable,
    defaults: rules.Defaults,
    uses_telemetry: bool,
    today: date,
    now: datetime,
    reason: str,
    actor_id: int | None,
) -> tuple[list[int], int, list[int]]:
    """PostgreSQL, a few given cables (a test upload, a fault report): the statement of
    ``decide_into_batch_table`` decides them and, in the same statement, writes the changed
    dates (``py = 0``) with their history rows, as ``due._write_batch`` writes from the table.

    No temporary table to create, fill, read and drop: one round trip instead of eight. Every
    per-cable read is also held to the given ids (the batch's id range alone would read every
    trigger and alert between the lowest and the highest), and the planner, seeing a handful of
    rows, needs no JIT or memory settings. Returns (the cables in scope, the number written, the
    cables left to the Python rules), ids ascending.
    """
    s = _Sql()
    ctes, select = _decision(
        s,
        lo=ids[0],
        hi=ids[-1],
        ids=ids,
        table=table,
        defaults=defaults,
        uses_telemetry=uses_telemetry,
        today=today,
        narrow=True,
    )
    qn = connection.ops.quote_name
    meta = Cable._meta
    cb, hist = _t(Cable), qn(Cable.history.model._meta.db_table)
    due, updated = _c(Cable, "retest_due"), _c(Cable, "updated_at")
    base_cols = [qn(f.column) for f in meta.concrete_fields]
    hist_cols = base_cols + [
        qn(n) for n in ("history_date", "history_change_reason", "history_type", "history_user_id")
    ]
    ctes += [
        f"d AS ({select})",
        f"u AS (UPDATE {cb} SET {due} = d.due, {updated} = {s.p(now)} FROM d WHERE {cb}.id = d.id "
        f"AND d.py = 0 AND {cb}.{due} IS DISTINCT FROM d.due RETURNING {cb}.*)",
        f"w AS (INSERT INTO {hist} ({', '.join(hist_cols)}) SELECT {', '.join('u.' + c for c in base_cols)}, "
        f"{s.p(now)}, {s.p(reason)}, '~', {s.p(actor_id)} FROM u RETURNING 1)",
    ]
    with connection.cursor() as cur:
        cur.execute(
            f"WITH {', '.join(ctes)} SELECT ARRAY(SELECT id FROM c ORDER BY id), (SELECT COUNT(*) FROM w), "
            "ARRAY(SELECT id FROM d WHERE py = 1 ORDER BY id)",
            s.params,
        )
        seen, written, left = cur.fetchone()
    return list(seen), written, list(left)


def _decision(
    s: _Sql,
    *,
    lo: int,
    hi: int,
    ids: list[int] | None,
    table: PolicyTable,
    defaults: rules.Defaults,
    uses_telemetry: bool,
    today: date,
    narrow: bool = False,
) -> tuple[list[str], str]:
    """The CTEs and the final SELECT (id, due, py) deciding the cables in [lo, hi] (and in
    ``ids``); their parameters are collected in ``s``. ``narrow`` (PostgreSQL, with ``ids``):
    every per-cable read is held to the ids too, not only to their range (the same dates: every
    read is joined to the cables in scope in the end)."""
    tz = timezone.get_current_timezone_name()
    cb, ce, ct = _t(Cable), _t(CableEnd), _t(CableTest)
    seg, lk, al = _t(LinkSegment), _t(Link), _t(Alert)
    fibre = sorted(rules.FIBRE_KINDS)
    sealed = sorted(rules.SEALED_KINDS)

    created = s.day(f"cb.{_c(Cable, 'created_at')}", tz)
    scope = (
        f"cb.id >= {s.p(lo)} AND cb.id <= {s.p(hi)} AND (cb.{_c(Cable, 'status')} NOT IN "
        f"({s.many([CableStatus.PLANNED, CableStatus.RETIRED])}) OR cb.{_c(Cable, 'retest_due')} IS NOT NULL)"
    )
    if ids is not None:
        scope += f" AND cb.id = ANY({s.p(ids, 'bigint[]')})" if s.pg else f" AND cb.id IN ({s.many(ids)})"
    ctes = [
        f"c AS (SELECT cb.id, cb.{_c(Cable, 'kind')} AS kind, cb.{_c(Cable, 'status')} AS status, "
        f"COALESCE(cb.{_c(Cable, 'install_date')}, {created}) AS since FROM {cb} cb WHERE {scope})"
    ]

    def rng(alias: str, column: str = "cable_id") -> str:
        held = f"{alias}.{column} >= {s.p(lo)} AND {alias}.{column} <= {s.p(hi)}"
        if narrow and ids is not None and s.pg:
            held += f" AND {alias}.{column} = ANY({s.p(ids, 'bigint[]')})"
        return held

    # The policy table as VALUES: (site, kind, cls, iv, sh, acc).
    vals = []
    for i, (site, kind, cls, iv, sh, acc) in enumerate(table.rows):
        if i == 0:
            vals.append(
                f"({s.p(site, 'bigint')}, {s.p(kind, 'text')}, {s.p(cls, 'text')}, "
                f"{s.p(iv, 'integer')}, {s.p(sh, 'integer')}, {s.p(acc, 'integer')})"
            )
        else:
            vals.append(f"({s.many([site, kind, cls, iv, sh, acc])})")
    ctes.append(f"pol(site, kind, cls, iv, sh, acc) AS (VALUES {', '.join(vals)})")

    joins = ""
    if table.sites:
        # The site of the cable's A end (its device's rack), as the rules take it.
        ctes.append(
            f"st AS (SELECT e.cable_id, MIN(rm.{_c(Room, 'site')}) AS site_id FROM {ce} e "
            f"LEFT JOIN {_t(Cage)} g ON g.id = e.{_c(CableEnd, 'cage')} "
            f"LEFT JOIN {_t(Device)} dg ON dg.id = g.{_c(Cage, 'device')} "
            f"LEFT JOIN {_t(Port)} pt ON pt.id = e.{_c(CableEnd, 'port')} "
            f"LEFT JOIN {_t(Device)} dp ON dp.id = pt.{_c(Port, 'device')} "
            f"JOIN {_t(Rack)} rk ON rk.id = COALESCE(dg.{_c(Device, 'rack')}, dp.{_c(Device, 'rack')}) "
            f"JOIN {_t(Row)} rw ON rw.id = rk.{_c(Rack, 'row')} "
            f"JOIN {_t(Room)} rm ON rm.id = rw.{_c(Row, 'room')} "
            f"WHERE e.{_c(CableEnd, 'side')} = 'A' AND e.{_c(CableEnd, 'active')} AND {rng('e')} "
            f"GROUP BY e.cable_id)"
        )
        joins += " LEFT JOIN st ON st.cable_id = c.id"
    cls_key = "''"
    if table.classes:
        # A class no rule names resolves like no class: keep it as ''.
        ctes.append(
            f"cl AS (SELECT DISTINCT sg.cable_id, CASE WHEN l.{_c(Link, 'link_class')} IN "
            f"({s.many(table.classes)}) THEN l.{_c(Link, 'link_class')} ELSE '' END AS cls "
            f"FROM {seg} sg JOIN {lk} l ON l.id = sg.link_id "
            f"WHERE l.{_c(Link, 'active')} AND l.{_c(Link, 'link_class')} <> '' AND {rng('sg')})"
        )
        joins += " LEFT JOIN cl ON cl.cable_id = c.id"
        cls_key = "COALESCE(cl.cls, '')"
    # A cable on several classes of link takes the strictest of them (as PolicyResolver.resolve).
    # (Keys built here, after the CTEs above: parameters are collected in the order of the text.)
    site_key = (
        f"CASE WHEN st.site_id IN ({s.many(table.sites)}) THEN st.site_id ELSE {NO_SITE} END"
        if table.sites
        else str(NO_SITE)
    )
    kind_key = f"CASE WHEN c.kind IN ({s.many(table.kinds)}) THEN c.kind ELSE '' END" if table.kinds else "''"
    on = f"pol.site = {site_key} AND pol.kind = {kind_key} AND pol.cls = {cls_key}"
    if table.classes:
        ctes.append(
            f"pc AS (SELECT c.id, MIN(pol.iv) AS iv, MIN(pol.sh) AS sh, MIN(pol.acc) AS acc FROM c{joins} "
            f"JOIN pol ON {on} GROUP BY c.id)"
        )
    else:  # one key per cable: no aggregate needed
        ctes.append(f"pc AS (SELECT c.id, pol.iv, pol.sh, pol.acc FROM c{joins} JOIN pol ON {on})")
    # The last qualifying pass: OLTS/OTDR for fibre, a qualification for sealed media (other media
    # have no due date: ``rules.retested``).
    ctes.append(
        f"ps AS (SELECT t.cable_id, MAX(t.{_c(CableTest, 'tested_at')}) AS at FROM {ct} t "
        f"JOIN c ON c.id = t.cable_id WHERE {rng('t')} AND t.{_c(CableTest, 'verdict')} IN ({s.many(PASSING)}) "
        f"AND ((c.kind IN ({s.many(fibre)}) AND t.{_c(CableTest, 'kind')} IN ({s.many(['olts', 'otdr'])})) "
        f"OR (c.kind IN ({s.many(sealed)}) AND t.{_c(CableTest, 'kind')} = {s.p('qualification')})) "
        f"GROUP BY t.cable_id)"
    )
    ctes.append(
        f"tg AS (SELECT t.cable_id, t.{_c(CableTest, 'tested_at')} AS at FROM {ct} t "
        f"WHERE {rng('t')} AND t.{_c(CableTest, 'verdict')} = {s.p(Verdict.FAIL)} "
        f"UNION ALL SELECT r.cable_id, r.{_c(RetestTrigger, 'occurred_at')} FROM {_t(RetestTrigger)} r "
        f"WHERE {rng('r')} "
        f"UNION ALL SELECT n.cable_id, n.{_c(FieldNote, 'at')} FROM {_t(FieldNote)} n "
        f"WHERE {rng('n')} AND n.{_c(FieldNote, 'kind')} IN ({s.many(FIELD_TRIGGERS)}) "
        f"UNION ALL SELECT a.cable_id, a.{_c(Alert, 'opened_at')} FROM {al} a "
        f"WHERE {rng('a')} AND a.{_c(Alert, 'rule')} = {s.p(AlertRule.LOSS_INCREASE)} "
        f"UNION ALL SELECT sg.cable_id, a.{_c(Alert, 'opened_at')} FROM {seg} sg "
        f"JOIN {al} a ON a.link_id = sg.link_id "
        f"WHERE {rng('sg')} AND a.{_c(Alert, 'rule')} = {s.p(AlertRule.LOSS_INCREASE)})"
    )
    # The first trigger after the last pass (every trigger when there is no pass).
    ctes.append(
        "ta AS (SELECT tg.cable_id, MIN(tg.at) AS at FROM tg LEFT JOIN ps ON ps.cable_id = tg.cable_id "
        "WHERE ps.at IS NULL OR tg.at > ps.at GROUP BY tg.cable_id)"
    )
    alert_join, alert_open = "", "CAST(NULL AS INTEGER)"
    if uses_telemetry:
        # Per cable: NULL = no alert ever (on it or a link over it), 0 = some, none open, 1 = open.
        ctes.append(
            f"al AS (SELECT x.cable_id, MAX(CASE WHEN x.state = {s.p('open')} THEN 1 ELSE 0 END) AS op "
            f"FROM (SELECT a.cable_id, a.{_c(Alert, 'state')} AS state FROM {al} a WHERE {rng('a')} "
            f"UNION ALL SELECT sg.cable_id, a.{_c(Alert, 'state')} FROM {seg} sg "
            f"JOIN {al} a ON a.link_id = sg.link_id WHERE {rng('sg')}) x GROUP BY x.cable_id)"
        )
        alert_join, alert_open = " LEFT JOIN al ON al.cable_id = c.id", "al.op"
    basis = s.day("ps.at", tz)
    trig = s.day("ta.at", "UTC")
    ctes.append(
        f"f AS (SELECT c.id, c.kind, c.status, c.since, pc.iv, pc.sh, pc.acc, {basis} AS basis, {trig} AS trig, "
        f"{alert_open} AS aop FROM c JOIN pc ON pc.id = c.id LEFT JOIN ps ON ps.cable_id = c.id "
        f"LEFT JOIN ta ON ta.cable_id = c.id{alert_join})"
    )
    today_p = s.p(today, "date")
    ctes.append(
        f"g AS (SELECT f.*, CASE WHEN basis IS NULL "
        f"THEN {s.add(f'COALESCE(since, {today_p})', s.p(defaults.new_install_days, 'integer'))} "
        f"ELSE {s.add('basis', 'iv')} END AS due0 FROM f)"
    )
    horizon = rules.add_days(today, defaults.remind_days)

    def rolls() -> str:
        return (
            f"basis IS NOT NULL AND acc = 1 AND status = {s.p(CableStatus.IN_PRODUCTION)} AND iv > 0 "
            f"AND due0 <= {s.p(horizon, 'date')}"
        )

    roll_when = rolls()
    whole_intervals = s.diff(s.p(horizon, "date"), "basis")
    ctes.append(
        f"h AS (SELECT g.*, CASE WHEN {roll_when} AND aop IS NULL "
        f"THEN {s.add('basis', f'iv * ({whole_intervals} / iv + 1)')} ELSE due0 END AS due1 FROM g)"
    )
    no_due = s.many([CableStatus.PLANNED, CableStatus.RETIRED])
    tested = s.many(sorted(rules.TESTED_KINDS))
    python_when = rolls()
    select = (
        f"SELECT id, CASE WHEN status IN ({no_due}) OR kind NOT IN ({tested}) THEN NULL "
        f"WHEN trig IS NULL THEN due1 ELSE {s.least('due1', s.add('trig', 'sh'))} END AS due, "
        f"CASE WHEN {python_when} AND aop = 0 THEN 1 ELSE 0 END AS py FROM h"
    )
    return ctes, select
