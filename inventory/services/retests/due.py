"""Retest due dates: recomputed set-based, in batches, with the change kept in history.

Why raw ``UPDATE ... FROM`` plus ``INSERT ... SELECT`` into the history table
----------------------------------------------------------------------------------
``Cable`` and ``Link`` are history-tracked and refuse ``QuerySet.update()``. A recompute may move
the due date of tens of thousands of cables (a policy change, the first run on an imported
plant), so one ``save()`` per cable (simple-history's path) is out. Each batch instead:

1. decides every date of the batch in ONE statement into a temporary table
   (:mod:`inventory.services.retests.due_sets`); the few it leaves to the pure rules of
   :mod:`inventory.core.retest_rules` are decided from facts read in a fixed number of queries,
2. writes only the rows whose date changed with ONE ``UPDATE cable SET retest_due = b.due FROM
   batch b WHERE cable.id = b.id`` (``VALUES`` for the rules' rows),
3. and in the same transaction ONE ``INSERT INTO historicalcable SELECT ..., '~', reason FROM
   cable WHERE id IN (changed)``: a full history row per changed cable, exactly what
   simple-history would have written for a ``save()``, with the reason "retest due recomputed".

So the cable's history page shows every due-date change with its time, reason and user (the user
whose test, fault or edit moved the date, :func:`inventory.db.audit.attributed`; none for the
daily sweep), and the write
costs two statements per batch whatever the batch size. We copy the row with ``INSERT ... SELECT``
rather than ``inventory.db.bulk.bulk_insert_rows`` because the history row must be the row *after*
the update, which the database already has: nothing travels to Python and back. The block runs
inside ``sanctioned_bulk_write()`` to say that this writer keeps history itself.

A few given cables on PostgreSQL (the recompute after a test upload or a fault report, up to
``due_sets.FEW``) skip the temporary table: the same decision, the UPDATE and the history INSERT
run as ONE statement (data-modifying CTEs), then one for their links, in one transaction.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Max, Min, Q
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core import retest_rules as rules
from inventory.core.choices import (
    PASSING,
    AlertRule,
    CableStatus,
    RetestTriggerReason,
    Verdict,
)
from inventory.db.audit import attributed
from inventory.models import (
    Alert,
    Cable,
    CableEnd,
    CableTest,
    Device,
    FieldNote,
    Link,
    LinkSegment,
    Rack,
    RetestPolicy,
    RetestTrigger,
    Room,
    Row,
    Site,
    sanctioned_bulk_write,
)
from inventory.services.retests import due_sets
from inventory.services.retests.due_sets import FIELD_TRIGGERS

log = logging.getLogger(__name__)

__all__ = ["FIELD_TRIGGERS"]  # re-exported: the reminders and the tests name it from here


def retest_defaults() -> rules.Defaults:
    return rules.Defaults(
        interval_days=app_settings.retest_interval_days,
        shorten_days=app_settings.retest_shorten_days,
        new_install_days=app_settings.retest_new_install_days,
        remind_days=app_settings.retest_remind_days,
        accept_telemetry=app_settings.retest_accept_telemetry,
    )


def retest_policy_resolver() -> rules.PolicyResolver:
    policies = [
        rules.PolicyRule(
            site_id=p.site_id,
            kind=p.kind,
            link_class=p.link_class,
            interval_days=p.interval_days,
            shorten_days=p.shorten_days,
            accept_telemetry=p.accept_telemetry,
        )
        for p in RetestPolicy.objects.all()
    ]
    sites = dict(
        Site.objects.filter(retest_interval_days__isnull=False).values_list("pk", "retest_interval_days")
    )
    return rules.PolicyResolver(policies, retest_defaults(), site_intervals=sites)


@dataclass(frozen=True)
class RecomputeResult:
    cables_seen: int
    cables_changed: int
    links_changed: int
    # cables whose due date could not be decided (id, reason): kept as they were, logged, and
    # listed on the sweep run; the rest of the plant is swept all the same
    set_aside: tuple[tuple[int, str], ...] = ()


def _write_dates(
    model,
    field: str,
    changes: list[tuple[int, date | None]],
    *,
    reason: str,
    now: datetime,
    actor_id: int | None,
) -> list[int]:
    """One UPDATE ... FROM for the batch, then one INSERT ... SELECT of the history rows.

    Returns the ids whose date this call actually changed.
    """
    if not changes:
        return []
    qn = connection.ops.quote_name
    meta = model._meta
    table = qn(meta.db_table)
    column = qn(meta.get_field(field).column)
    updated = qn(meta.get_field("updated_at").column)
    pg = connection.vendor == "postgresql"
    params: list = []
    if pg:
        values = ", ".join(["(%s::bigint, %s::date)"] * len(changes))
        for pk, due in changes:
            params += [pk, due]
        sql = (
            f"UPDATE {table} SET {column} = v.due, {updated} = %s "  # noqa: S608 - table and column names from model _meta, quoted; values are placeholders
            f"FROM (VALUES {values}) AS v(id, due) "
            f"WHERE {table}.id = v.id AND {table}.{column} IS DISTINCT FROM v.due RETURNING {table}.id"
        )
    else:
        values = ", ".join(["(%s, %s)"] * len(changes))
        for pk, due in changes:
            params += [pk, due.isoformat() if due else None]
        sql = (
            f"WITH v(id, due) AS (VALUES {values}) "  # noqa: S608 - table and column names from model _meta, quoted; values are placeholders
            f"UPDATE {table} SET {column} = v.due, {updated} = %s FROM v "
            f"WHERE {table}.id = v.id AND {table}.{column} IS NOT v.due RETURNING {table}.id"
        )
    now_param = now if pg else connection.ops.adapt_datetimefield_value(now)
    hist = model.history.model
    base_cols = [f.column for f in meta.concrete_fields]
    hist_cols = [qn(c) for c in base_cols] + [
        qn(n) for n in ("history_date", "history_change_reason", "history_type", "history_user_id")
    ]
    with sanctioned_bulk_write(), connection.cursor() as cur:
        cur.execute(sql, [now_param, *params] if pg else [*params, now_param])
        # Only the rows this statement changed: a concurrent recompute that got there first
        # (same facts, same date) leaves nothing to record twice.
        ids = [r[0] for r in cur.fetchall()]
        if not ids:
            return []
        marks = ", ".join(["%s"] * len(ids))
        cur.execute(
            f"INSERT INTO {qn(hist._meta.db_table)} ({', '.join(hist_cols)}) "  # noqa: S608 - table and column names from model _meta, quoted; values are placeholders
            f"SELECT {', '.join(qn(c) for c in base_cols)}, %s, %s, '~', %s FROM {table} WHERE id IN ({marks})",
            [now_param, reason, actor_id, *ids],
        )
    return ids


def _gather(
    cable_rows: list[tuple],
    resolver: rules.PolicyResolver,
    today: date,
    site_of_rack: dict[int, int],
    set_aside: list[tuple[int, str]] | None = None,
    *,
    exact: bool = False,
) -> list[tuple[int, date | None, date | None]]:
    """Facts for one batch of cables in a fixed number of queries; returns (id, old, new).

    The facts are read for the id range of the batch, or (``exact``) for its ids only: the few,
    scattered cables the set-based statement leaves to the rules.
    """
    ids = [r[0] for r in cable_rows]
    lo, hi = ids[0], ids[-1]
    in_range = Q(cable_id__in=ids) if exact else Q(cable_id__gte=lo, cable_id__lte=hi)

    rack_of = dict(
        CableEnd.objects.filter(in_range, side="A", active=True)
        .annotate(rack=Coalesce(F("cage__device__rack_id"), F("port__device__rack_id")))
        .values_list("cable_id", "rack")
    )

    # Dates, not datetimes: 100,000 timezone-aware datetimes cost seconds to load; the exact
    # time is fetched below only for the few cables that have a trigger to order against it.
    last_by_kind: dict[int, dict[str, date]] = defaultdict(dict)
    for cable_id, kind, day in (
        CableTest.objects.filter(in_range, verdict__in=PASSING)
        .values("cable_id", "kind")
        .annotate(day=Max(TruncDate("tested_at")))
        .values_list("cable_id", "kind", "day")
    ):
        last_by_kind[cable_id][kind] = day

    triggers: dict[int, list[datetime]] = defaultdict(list)
    for cable_id, at in CableTest.objects.filter(in_range, verdict=Verdict.FAIL).values_list(
        "cable_id", "tested_at"
    ):
        triggers[cable_id].append(at)
    for cable_id, at in RetestTrigger.objects.filter(in_range).values_list("cable_id", "occurred_at"):
        triggers[cable_id].append(at)
    # Faults reported and re-seats/cleanings done from the phone page (the fieldwork notes).
    for cable_id, at in FieldNote.objects.filter(in_range, kind__in=FIELD_TRIGGERS).values_list(
        "cable_id", "at"
    ):
        triggers[cable_id].append(at)
    for cable_id, at in Alert.objects.filter(in_range, rule=AlertRule.LOSS_INCREASE).values_list(
        "cable_id", "opened_at"
    ):
        triggers[cable_id].append(at)
    for cable_id, at in LinkSegment.objects.filter(
        in_range, link__alerts__rule=AlertRule.LOSS_INCREASE
    ).values_list("cable_id", "link__alerts__opened_at"):
        triggers[cable_id].append(at)

    last_at: dict[int, dict[str, datetime]] = defaultdict(dict)
    if triggers:
        for cable_id, kind, at in (
            CableTest.objects.filter(cable_id__in=list(triggers), verdict__in=PASSING)
            .values("cable_id", "kind")
            .annotate(at=Max("tested_at"))
            .values_list("cable_id", "kind", "at")
        ):
            last_at[cable_id][kind] = at

    classes: dict[int, set[str]] = defaultdict(set)
    if resolver.uses_link_class:
        for cable_id, cls in (
            LinkSegment.objects.filter(in_range, link__active=True)
            .exclude(link__link_class="")
            .values_list("cable_id", "link__link_class")
        ):
            classes[cable_id].add(cls)

    alerts: dict[int, list[datetime]] = defaultdict(list)
    open_alert: set[int] = set()
    if resolver.uses_telemetry:
        for source in (
            Alert.objects.filter(in_range).values_list("cable_id", "opened_at", "state"),
            LinkSegment.objects.filter(in_range, link__alerts__isnull=False).values_list(
                "cable_id", "link__alerts__opened_at", "link__alerts__state"
            ),
        ):
            for cable_id, at, state in source:
                if cable_id is None:
                    continue
                alerts[cable_id].append(at)
                if state == "open":
                    open_alert.add(cable_id)

    defaults = resolver.defaults
    qualifying_of: dict[str, frozenset[str] | None] = {}
    out = []
    for pk, kind, status, since, old in cable_rows:
        if kind not in qualifying_of:
            qualifying_of[kind] = rules.qualifying_test_kinds(kind)
        qualifying = qualifying_of[kind]
        by_kind = last_by_kind.get(pk)
        passes = [d for k, d in by_kind.items() if qualifying is None or k in qualifying] if by_kind else ()
        precise = (
            [a for k, a in last_at[pk].items() if qualifying is None or k in qualifying]
            if pk in last_at
            else ()
        )
        policy = resolver.resolve(site_of_rack.get(rack_of.get(pk)), kind, classes.get(pk, ()))
        facts = rules.CableFacts(
            cable_id=pk,
            kind=kind,
            status=status,
            install_date=since,
            last_pass=max(passes) if passes else None,
            last_pass_at=max(precise) if precise else None,
            triggers=tuple(triggers[pk]) if pk in triggers else (),
            live=status == CableStatus.IN_PRODUCTION,
            alerts=tuple(alerts[pk]) if pk in alerts else (),
            alert_open=pk in open_alert,
        )
        try:
            out.append((pk, old, rules.retest_due(facts, policy, defaults, today)))
        except Exception as exc:  # noqa: BLE001 - one cable's bad facts must not stop the plant's sweep
            log.warning("retest due of cable %s not decided, kept as it was: %r", pk, exc)
            if set_aside is not None:
                set_aside.append((pk, f"{type(exc).__name__}: {exc}"[:300]))
    return out


def _scope(cable_ids: Iterable[int] | None) -> list[int]:
    """The cables a recompute looks at: every one that has or should have a date."""
    qs = Cable.objects.filter(
        ~Q(status__in=[CableStatus.PLANNED, CableStatus.RETIRED]) | Q(retest_due__isnull=False)
    )
    if cable_ids is not None:
        qs = qs.filter(pk__in=list(cable_ids))
    return list(qs.order_by("pk").values_list("pk", flat=True))


def _rows(ids: list[int], *, exact: bool):
    """(id, kind, status, since, old due) of the cables, for the rules."""
    qs = Cable.objects.filter(pk__in=ids) if exact else Cable.objects.filter(pk__gte=ids[0], pk__lte=ids[-1])
    if not exact:
        qs = qs.filter(
            ~Q(status__in=[CableStatus.PLANNED, CableStatus.RETIRED]) | Q(retest_due__isnull=False)
        )
    return list(
        qs.order_by("pk")
        .annotate(since=Coalesce(F("install_date"), TruncDate("created_at")))
        .values_list("pk", "kind", "status", "since", "retest_due")
    )


def retest_due_by_rules(
    *, now: datetime, cable_ids: Iterable[int] | None = None, batch_size: int = 5000
) -> dict[int, date | None]:
    """Every cable's due date as the Python rules decide it, written nowhere.

    The reference the set-based statement is held to (the tests compare the two on a varied
    plant), and the path for the cables that statement leaves to the rules.
    """
    today = timezone.localdate(now)
    resolver = retest_policy_resolver()
    site_of_rack = dict(Rack.objects.values_list("pk", "row__room__site_id"))
    ids = _scope(cable_ids)
    exact = cable_ids is not None
    out: dict[int, date | None] = {}
    for start in range(0, len(ids), batch_size):
        rows = _rows(ids[start : start + batch_size], exact=exact)
        if rows:
            out.update((pk, new) for pk, _, new in _gather(rows, resolver, today, site_of_rack, exact=exact))
    return out


def _write_batch(*, now: datetime, reason: str, actor_id: int | None) -> int:
    """Write the dates the statement decided (``py = 0``) that differ, with their history rows.

    PostgreSQL: one statement (the UPDATE's RETURNING feeds the history INSERT). SQLite: the
    UPDATE returns the ids, then one INSERT ... SELECT per 500 of them.
    """
    qn = connection.ops.quote_name
    meta = Cable._meta
    table = qn(meta.db_table)
    column = qn(meta.get_field("retest_due").column)
    updated = qn(meta.get_field("updated_at").column)
    hist = Cable.history.model
    base_cols = [qn(f.column) for f in meta.concrete_fields]
    hist_cols = base_cols + [
        qn(n) for n in ("history_date", "history_change_reason", "history_type", "history_user_id")
    ]
    batch = due_sets.BATCH_TABLE
    hist_table = qn(hist._meta.db_table)
    with sanctioned_bulk_write(), connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute(
                f"WITH u AS (UPDATE {table} SET {column} = b.due, {updated} = %s FROM {batch} b "  # noqa: S608 - names from model _meta, quoted; values are placeholders
                f"WHERE {table}.id = b.id AND b.py = 0 AND {table}.{column} IS DISTINCT FROM b.due "
                f"RETURNING {table}.*) "
                f"INSERT INTO {hist_table} ({', '.join(hist_cols)}) "
                f"SELECT {', '.join('u.' + c for c in base_cols)}, %s, %s, '~', %s FROM u",
                [now, now, reason, actor_id],
            )
            return cur.rowcount
        stamp = connection.ops.adapt_datetimefield_value(now)
        cur.execute(
            f"UPDATE {table} SET {column} = b.due, {updated} = %s FROM {batch} b "  # noqa: S608 - names from model _meta, quoted; values are placeholders
            f"WHERE {table}.id = b.id AND b.py = 0 AND {table}.{column} IS NOT b.due RETURNING {table}.id",
            [stamp],
        )
        ids = [r[0] for r in cur.fetchall()]
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            cur.execute(
                f"INSERT INTO {hist_table} ({', '.join(hist_cols)}) "  # noqa: S608 - names from model _meta, quoted; values are placeholders
                f"SELECT {', '.join(base_cols)}, %s, %s, '~', %s FROM {table} "
                f"WHERE id IN ({', '.join(['%s'] * len(part))})",
                [stamp, reason, actor_id, *part],
            )
        return len(ids)


def retest_due_recompute(
    *,
    now: datetime,
    cable_ids: Iterable[int] | None = None,
    batch_size: int | None = None,
    reason: str = "retest due recomputed",
    actor=None,
) -> RecomputeResult:
    """Recompute ``Cable.retest_due`` (and the links over them) for every cable or the given ones.

    The history rows name ``actor`` (default: the user of the request under way, none in the
    daily sweep) as the one who changed the dates.

    Per batch of cables (an id range; 50,000 on PostgreSQL, 5,000 on SQLite), in one
    transaction: one statement decides every date into a temporary table
    (:mod:`inventory.services.retests.due_sets`), one writes the changed ones with their
    history rows, and the few the statement leaves to the Python rules (live cables under a
    telemetry policy, near their date, with past alerts) are decided and written as before.
    """
    today = timezone.localdate(now)
    actor, reason = attributed(actor, reason)
    actor_id = getattr(actor, "pk", None)
    resolver = retest_policy_resolver()
    table = due_sets.policy_table(resolver)
    pg = connection.vendor == "postgresql"
    given = sorted(set(cable_ids)) if cable_ids is not None else None
    if pg and given and len(given) <= due_sets.FEW:
        return _recompute_few(
            given, now=now, today=today, resolver=resolver, table=table, reason=reason, actor_id=actor_id
        )
    size = batch_size or (50_000 if pg else 5_000)
    ids = _scope(cable_ids)
    exact = cable_ids is not None
    changed = 0
    set_aside: list[tuple[int, str]] = []
    sites: dict[int, int] = {}
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        with transaction.atomic():
            try:
                with transaction.atomic():  # a savepoint: a failed statement leaves the batch as it was
                    due_sets.decide_into_batch_table(
                        lo=chunk[0],
                        hi=chunk[-1],
                        ids=chunk if exact else None,
                        table=table,
                        defaults=resolver.defaults,
                        uses_telemetry=resolver.uses_telemetry,
                        today=today,
                    )
                    changed += _write_batch(now=now, reason=reason, actor_id=actor_id)
                    with connection.cursor() as cur:
                        cur.execute(f"SELECT id FROM {due_sets.BATCH_TABLE} WHERE py = 1 ORDER BY id")  # noqa: S608 - a constant name
                        left = [r[0] for r in cur.fetchall()]
                        cur.execute(f"DROP TABLE {due_sets.BATCH_TABLE}")
                by_rules = [(part, True) for part in _chunks(left)]
            except DatabaseError as exc:
                # Whatever the statement tripped on (a value out of a type's range, say), the
                # rules decide this batch cable by cable and set aside only the cables they cannot.
                log.warning(
                    "retest due statement failed for cables %s-%s, the rules decide them: %r",
                    chunk[0],
                    chunk[-1],
                    exc,
                )
                by_rules = [(part, exact) for part in _chunks(chunk)]
            changed += _decide_by_rules(
                by_rules,
                resolver=resolver,
                today=today,
                sites=sites,
                set_aside=set_aside,
                now=now,
                reason=reason,
                actor_id=actor_id,
            )
    links = _links_recompute(now=now, cable_ids=ids if exact else None, reason=reason, actor_id=actor_id)
    return RecomputeResult(
        cables_seen=len(ids), cables_changed=changed, links_changed=links, set_aside=tuple(set_aside)
    )


def _decide_by_rules(
    parts: list[tuple[list[int], bool]],
    *,
    resolver: rules.PolicyResolver,
    today: date,
    sites: dict[int, int],
    set_aside: list[tuple[int, str]],
    now: datetime,
    reason: str,
    actor_id: int | None,
) -> int:
    """The Python rules decide and write the cables of ``parts`` ((ids, exact) each); returns how
    many dates changed. ``sites``: the site of each rack, read on first need and kept."""
    changed = 0
    for part, part_exact in parts:
        if not sites:
            sites.update(Rack.objects.values_list("pk", "row__room__site_id"))
        rows = _rows(part, exact=part_exact)
        if not rows:
            continue
        decided = _gather(rows, resolver, today, sites, set_aside, exact=part_exact)
        changes = [(pk, new) for pk, old, new in decided if old != new]
        changed += len(_write_dates(Cable, "retest_due", changes, reason=reason, now=now, actor_id=actor_id))
    return changed


def _recompute_few(
    ids: list[int],
    *,
    now: datetime,
    today: date,
    resolver: rules.PolicyResolver,
    table: due_sets.PolicyTable,
    reason: str,
    actor_id: int | None,
) -> RecomputeResult:
    """A few given cables on PostgreSQL (an upload, a fault report): one statement decides and
    writes them with their history (``due_sets.decide_and_write_few``), then one the links over
    them, in one transaction (one commit to wait for). What the statement leaves to the rules,
    and a statement that fails, go the batch path's way."""
    set_aside: list[tuple[int, str]] = []
    sites: dict[int, int] = {}
    decided = False
    try:
        # The transaction itself after a commit (the usual caller), a savepoint inside another.
        with transaction.atomic():
            seen, changed, left = due_sets.decide_and_write_few(
                ids=ids,
                table=table,
                defaults=resolver.defaults,
                uses_telemetry=resolver.uses_telemetry,
                today=today,
                now=now,
                reason=reason,
                actor_id=actor_id,
            )
            decided = True
            changed += _decide_by_rules(
                [(left, True)] if left else [],
                resolver=resolver,
                today=today,
                sites=sites,
                set_aside=set_aside,
                now=now,
                reason=reason,
                actor_id=actor_id,
            )
            links = _links_recompute(now=now, cable_ids=seen, reason=reason, actor_id=actor_id) if seen else 0
    except DatabaseError as exc:
        if decided:  # the rules' or the links' write failed, not the statement: raise
            raise
        log.warning("retest due statement failed for cables %s, the rules decide them: %r", ids, exc)
        seen = _scope(ids)
        with transaction.atomic():
            changed = _decide_by_rules(
                [(seen, True)] if seen else [],
                resolver=resolver,
                today=today,
                sites=sites,
                set_aside=set_aside,
                now=now,
                reason=reason,
                actor_id=actor_id,
            )
            links = _links_recompute(now=now, cable_ids=seen, reason=reason, actor_id=actor_id) if seen else 0
    return RecomputeResult(
        cables_seen=len(seen), cables_changed=changed, links_changed=links, set_aside=tuple(set_aside)
    )


def _links_recompute(
    *, now: datetime, cable_ids: list[int] | None, reason: str, actor_id: int | None, batch_size: int = 5000
) -> int:
    """A link is due when its first segment is: the minimum of its cables' due dates.

    PostgreSQL: one statement (:func:`_links_recompute_pg`); SQLite: the dates are read in
    batches and written through ``_write_dates``, the same result by a slower path.
    """
    if connection.vendor == "postgresql":
        return _links_recompute_pg(now=now, cable_ids=cable_ids, reason=reason, actor_id=actor_id)
    links = Link.objects.all()
    if cable_ids is not None:
        links = links.filter(segments__cable_id__in=cable_ids).distinct()
    else:
        links = links.filter(Q(active=True) | Q(retest_due__isnull=False))
    current = dict(links.values_list("pk", "retest_due"))
    if not current:
        return 0
    wanted: dict[int, date | None] = {}
    link_ids = sorted(current)
    for start in range(0, len(link_ids), batch_size):
        chunk = link_ids[start : start + batch_size]
        wanted.update(
            LinkSegment.objects.filter(link_id__in=chunk, link__active=True)
            .values("link_id")
            .annotate(due=Min("cable__retest_due"))
            .values_list("link_id", "due")
        )
    changes = [(pk, wanted.get(pk)) for pk in link_ids if wanted.get(pk) != current[pk]]
    changed = 0
    for start in range(0, len(changes), batch_size):
        with transaction.atomic():
            changed += len(
                _write_dates(
                    Link,
                    "retest_due",
                    changes[start : start + batch_size],
                    reason=reason,
                    now=now,
                    actor_id=actor_id,
                )
            )
    return changed


def _links_recompute_pg(
    *, now: datetime, cable_ids: list[int] | None, reason: str, actor_id: int | None
) -> int:
    """Every link in scope gets the minimum due date of its cables (none when inactive), and
    the ones that change get their history row, in one statement."""
    qn = connection.ops.quote_name
    meta = Link._meta
    table, seg, cab = qn(meta.db_table), qn(LinkSegment._meta.db_table), qn(Cable._meta.db_table)
    hist = qn(Link.history.model._meta.db_table)
    base_cols = [qn(f.column) for f in meta.concrete_fields]
    hist_cols = base_cols + [
        qn(n) for n in ("history_date", "history_change_reason", "history_type", "history_user_id")
    ]
    if cable_ids is None:
        scope, params = "(l.active OR l.retest_due IS NOT NULL)", []
    else:
        scope = f"l.id IN (SELECT s.link_id FROM {seg} s WHERE s.cable_id = ANY(%s::bigint[]))"  # noqa: S608 - quoted names
        params = [list(cable_ids)]
    # A few cables' links: one statement, atomic by itself, priced too low for JIT to start.
    few = cable_ids is not None and len(cable_ids) <= due_sets.FEW
    with (
        sanctioned_bulk_write(),
        transaction.atomic() if not few else nullcontext(),
        connection.cursor() as cur,
    ):
        if not few:
            cur.execute("SET LOCAL jit = off")
        cur.execute(
            f"WITH m AS (SELECT l.id, CASE WHEN l.active THEN (SELECT MIN(c.retest_due) FROM {seg} s "  # noqa: S608 - names from model _meta, quoted; values are placeholders
            f"JOIN {cab} c ON c.id = s.cable_id WHERE s.link_id = l.id) END AS due FROM {table} l WHERE {scope}), "
            f"u AS (UPDATE {table} SET retest_due = m.due, updated_at = %s FROM m "
            f"WHERE {table}.id = m.id AND {table}.retest_due IS DISTINCT FROM m.due RETURNING {table}.*) "
            f"INSERT INTO {hist} ({', '.join(hist_cols)}) "
            f"SELECT {', '.join('u.' + c for c in base_cols)}, %s, %s, '~', %s FROM u",
            [*params, now, now, reason, actor_id],
        )
        return cur.rowcount


FULL_RECOMPUTE_ABOVE = 20_000


def retest_changed_cables(*, since: datetime, today: date) -> list[int] | None:
    """Cables whose due date may have changed since ``since`` (wall clock); None = all of them.

    What moves a due date: the cable itself (install, status), a new test, a trigger, an alert
    (on the cable or a link over it), a link change (class, path), a device move; and, where
    telemetry is accepted, the calendar itself for cables near their date. A change of policy or
    of the site/room/row/rack structure (intervals, teams) asks for everything.
    """
    for model in (RetestPolicy, Site, Room, Row, Rack):
        if model.objects.filter(updated_at__gte=since).exists():
            return None
    ids: set[int] = set()
    ids.update(Cable.objects.filter(updated_at__gte=since).values_list("pk", flat=True))
    ids.update(CableTest.objects.filter(created_at__gte=since).values_list("cable_id", flat=True))
    ids.update(RetestTrigger.objects.filter(created_at__gte=since).values_list("cable_id", flat=True))
    ids.update(
        FieldNote.objects.filter(at__gte=since, kind__in=FIELD_TRIGGERS, cable_id__isnull=False).values_list(
            "cable_id", flat=True
        )
    )
    ids.update(
        Alert.objects.filter(updated_at__gte=since, cable_id__isnull=False).values_list("cable_id", flat=True)
    )
    # Each source on its own index (link_updated; devices are few), never an OR across joins,
    # which PostgreSQL can only answer by reading every segment or every end of the plant.
    links = set(Link.objects.filter(updated_at__gte=since).values_list("pk", flat=True))
    links.update(
        Alert.objects.filter(updated_at__gte=since, link_id__isnull=False).values_list("link_id", flat=True)
    )
    for chunk in _chunks(sorted(links)):
        ids.update(LinkSegment.objects.filter(link_id__in=chunk).values_list("cable_id", flat=True))
    devices = sorted(Device.objects.filter(updated_at__gte=since).values_list("pk", flat=True))
    for chunk in _chunks(devices):
        ids.update(CableEnd.objects.filter(port__device_id__in=chunk).values_list("cable_id", flat=True))
        ids.update(CableEnd.objects.filter(cage__device_id__in=chunk).values_list("cable_id", flat=True))
    resolver = retest_policy_resolver()
    if resolver.uses_telemetry:
        horizon = today + timedelta(days=resolver.defaults.remind_days)
        ids.update(
            Cable.objects.filter(status=CableStatus.IN_PRODUCTION, retest_due__lte=horizon).values_list(
                "pk", flat=True
            )
        )
    if len(ids) > FULL_RECOMPUTE_ABOVE:
        return None
    return sorted(ids)


def _chunks(ids: list[int], size: int = 5000):
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def retest_due_refresh_on_commit(*, cable_id: int, now: datetime, reason: str, actor=None) -> None:
    """For the services that record a test, a fault or a re-seat: the cable's due date (and its
    links') is recomputed right after their transaction commits, not at the next daily sweep.

    Who caused it (``actor``, default the request's user, and its token) is read now, while the
    request is under way, and named on the history rows the recompute writes: the date moved
    because of that user's test, whenever the callback runs.

    The write has committed by then: a failure here is logged, never raised into the request
    (it would answer 500 for a write that happened); the daily sweep recomputes the cable."""
    actor, reason = attributed(actor, reason)

    def refresh() -> None:
        try:
            retest_due_recompute(now=now, cable_ids=[cable_id], reason=reason, actor=actor)
        except Exception:
            log.exception("retest due refresh after commit failed for cable %s (the sweep retries)", cable_id)

    transaction.on_commit(refresh)


def retest_due_refresh_many_on_commit(
    *, cable_ids: list[int], now: datetime, reason: str, actor=None
) -> None:
    """``retest_due_refresh_on_commit`` for a batch of cables (an OTDR project upload): one
    recompute for all of them after commit, not one per cable."""
    ids = sorted(set(cable_ids))
    actor, reason = attributed(actor, reason)
    transaction.on_commit(lambda: retest_due_recompute(now=now, cable_ids=ids, reason=reason, actor=actor))


@transaction.atomic
def retest_trigger_record(
    *,
    cable: Cable,
    reason: str,
    now: datetime,
    user: AbstractBaseUser | None = None,
    note: str = "",
) -> RetestTrigger:
    """Record a fault report, a re-seat or a finding that brings the cable's retest forward."""
    if reason not in RetestTriggerReason.values:
        raise ValidationError(
            {"reason": f"Unknown reason {reason!r}; one of {', '.join(RetestTriggerReason.values)}."}
        )
    if cable.status == CableStatus.RETIRED:
        raise ValidationError({"cable": f"{cable.label} is retired."})
    trigger = RetestTrigger.objects.create(
        cable=cable,
        reason=reason,
        occurred_at=now,
        created_by=user if user and user.pk else None,
        note=note[:300],
    )
    retest_due_recompute(
        now=now,
        cable_ids=[cable.pk],
        reason=f"retest brought forward: {reason}",
        actor=user if user and user.pk else None,
    )
    return trigger
