# ruff: noqa: S608 - built from model _meta names and choice constants; every id is a parameter
"""Keeps ``CableTestLatest`` (each cable's latest OLTS, OTDR and qualification, and the fibres
its OLTS must cover) with the tests and the cable's ends.

Every writer of ``CableTest`` calls ``cable_test_latest_refresh`` with the cables it wrote for,
in the same transaction, and so does the admin's cable form, the one place where the ends of a
cable already tested change: the row is recomputed from the cable's tests and ends, so it is
right whatever was written before (and a test the admin moved to another cable leaves the first
one right too).

Two transactions recording tests on one cable at once cannot lose either test: the refresh
deletes the cable's row and then inserts it merged, kind by kind, with any row a concurrent
writer committed in between (the newer of the two by ``tested_at``, then id). Tests are never
deleted, so the newer test is the latest.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection

from inventory.core.choices import ConnectorType, TestKind
from inventory.db import pipeline
from inventory.models import CableEnd, CableTest, CableTestLatest

# (kind, its columns in CableTestLatest, the test's columns they copy)
_KINDS = (
    (TestKind.OLTS, "olts", ("id", "tested_at", "verdict", "loss_db", "fibres_passed")),
    (TestKind.OTDR, "otdr", ("id", "tested_at", "verdict")),
    (TestKind.QUALIFICATION, "qualification", ("id", "tested_at", "verdict")),
)
_SUFFIX = {
    "id": "test_id",
    "tested_at": "at",
    "verdict": "verdict",
    "loss_db": "loss_db",
    "fibres_passed": "fibres_passed",
}
CHUNK = 5000  # ids a statement (SQLite's parameter limit is far above; PostgreSQL plans them fine)


def _columns() -> list[tuple[str, str, str]]:
    """(kind, target column, source column) for every column kept."""
    return [(kind, f"{prefix}_{_SUFFIX[src]}", src) for kind, prefix, srcs in _KINDS for src in srcs]


def _insert_sql(where: str, *, merge: bool) -> str:
    """``where`` restricts the tests and the ends read to the cables refreshed, as ``t.cable_id``
    (the ends' alias is rewritten from it)."""
    table, tests, ends = CableTestLatest._meta.db_table, CableTest._meta.db_table, CableEnd._meta.db_table
    cols = _columns()
    kinds = ", ".join(f"'{kind}'" for kind, _, _ in _KINDS)
    # only the columns kept: a test's JSON (warnings, details) is not sorted with it
    read = "t.cable_id, t.kind, " + ", ".join(f"t.{src}" for src in _KINDS[0][2])
    if connection.vendor == "postgresql":
        # one sort, then the first of each (cable, kind): no row numbers for a million tests
        ranked = (
            f"SELECT DISTINCT ON (t.cable_id, t.kind) {read} FROM {tests} t "
            f"WHERE t.kind IN ({kinds}) AND {where} ORDER BY t.cable_id, t.kind, t.tested_at DESC, t.id DESC"
        )
    else:
        ranked = (
            f"SELECT * FROM (SELECT {read}, ROW_NUMBER() OVER (PARTITION BY t.cable_id, t.kind "
            f"ORDER BY t.tested_at DESC, t.id DESC) AS rn FROM {tests} t "
            f"WHERE t.kind IN ({kinds}) AND {where}) AS n WHERE rn = 1"
        )
    pivot = ", ".join(
        f"MAX(CASE WHEN r.kind = '{kind}' THEN r.{src} END) AS {col}" for kind, col, src in cols
    )
    # Merged with a row a concurrent writer committed since this refresh's DELETE: per kind, the
    # newer test's columns. (No row-value comparison: spelled out for every SQLite.)
    sets = []
    for _kind, prefix, srcs in _KINDS:
        at, tid = f"{prefix}_at", f"{prefix}_test_id"
        newer = (
            f"{table}.{at} IS NULL OR (excluded.{at} IS NOT NULL AND (excluded.{at} > {table}.{at} "
            f"OR (excluded.{at} = {table}.{at} AND excluded.{tid} > {table}.{tid})))"
        )
        for src in srcs:
            col = f"{prefix}_{_SUFFIX[src]}"
            sets.append(f"{col} = CASE WHEN {newer} THEN excluded.{col} ELSE {table}.{col} END")
    sets.append("fibres_in_use = excluded.fibres_in_use")  # the ends as they are now
    # facts.fibres_in_use: MPO-12 8 fibres, other MPOs every fibre, duplex LC 2, else the count or 1
    in_use = (
        f"SELECT e.cable_id, CASE "
        f"WHEN MAX(CASE WHEN e.connector_type = '{ConnectorType.MPO}' THEN 1 ELSE 0 END) = 1 "
        f"AND MAX(NULLIF(e.fibre_count, 0)) IS NOT NULL "
        f"THEN (CASE WHEN MAX(NULLIF(e.fibre_count, 0)) = 12 THEN 8 ELSE MAX(NULLIF(e.fibre_count, 0)) END) "
        f"WHEN MAX(CASE WHEN e.connector_type = '{ConnectorType.LC}' THEN 1 ELSE 0 END) = 1 THEN 2 "
        f"ELSE COALESCE(MAX(NULLIF(e.fibre_count, 0)), 1) END AS n "
        f"FROM {ends} e WHERE {where.replace('t.cable_id', 'e.cable_id')} GROUP BY e.cable_id"
    )
    names = ", ".join(col for _, col, _ in cols)
    # "WHERE 1 = 1": SQLite reads an ON after a bare FROM as a join's
    return (
        f"INSERT INTO {table} (cable_id, {names}, fibres_in_use) "
        f"SELECT g.*, COALESCE(u.n, 1) FROM (SELECT r.cable_id, {pivot} FROM ({ranked}) AS r GROUP BY r.cable_id) AS g "
        f"LEFT JOIN ({in_use}) AS u ON u.cable_id = g.cable_id WHERE 1 = 1"
        + (f" ON CONFLICT (cable_id) DO UPDATE SET {', '.join(sets)}" if merge else "")
    )


def cable_test_latest_refresh(*, cable_ids: Iterable[int] | None) -> None:
    """Recompute the latest tests of ``cable_ids`` (None: of every cable, as the demo seed and
    the migration do after writing tests in bulk). Call it inside the writer's transaction."""
    table = CableTestLatest._meta.db_table
    if cable_ids is None:
        # the seed's and the migration's: no writer runs beside them (and the seed builds the
        # table's key only after its load, so there is nothing to merge on). Server work only:
        # inside the seed's ``pipeline`` block it runs on the writer thread, after the tests.
        insert = _insert_sql("1 = 1", merge=False)

        def refresh(cur) -> None:
            cur.execute(f"DELETE FROM {table}")
            cur.execute(insert)

        pipeline.submit(refresh)
        return
    with connection.cursor() as cur:
        ids = sorted(set(cable_ids))
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            marks = ", ".join(["%s"] * len(chunk))
            cur.execute(f"DELETE FROM {table} WHERE cable_id IN ({marks})", chunk)
            cur.execute(_insert_sql(f"t.cable_id IN ({marks})", merge=True), chunk + chunk)  # tests, ends


__all__ = ["cable_test_latest_refresh"]
