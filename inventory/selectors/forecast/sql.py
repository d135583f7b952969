"""Portable SQL pieces the forecast reads share (PostgreSQL, and SQLite for the embedded default).

PostgreSQL runs the heavy statements with a larger ``work_mem`` (hash joins of a million rows
stay in memory) and without JIT compilation (it costs more than it saves here), set per
transaction.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

from django.apps import apps
from django.db import connection, transaction


@contextmanager
def heavy_queries():
    """Per-transaction settings for the million-row aggregates (PostgreSQL only)."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SET LOCAL work_mem = '256MB'")
                cur.execute("SET LOCAL jit = off")
        yield


def table_names(*names: str) -> dict[str, str]:
    return {m: apps.get_model("inventory", m)._meta.db_table for m in names}


def epoch_sql(col: str) -> str:
    if connection.vendor == "postgresql":
        return f"EXTRACT(EPOCH FROM {col})::float8"
    return f"CAST(strftime('%%s', {col}) AS REAL)"


def hazard_rows_sql(p: str = "hz") -> str:
    """A derived table (model_id, date_code, h) from the ``<p>_*`` parameters: typed arrays on
    PostgreSQL (``unnest``), a JSON list of triples on SQLite (``json_each``).

    On PostgreSQL the keys are grouped (they are unique already): a function scan has no
    statistics, so the planner otherwise assumes few distinct keys and hashes the MILLION-row
    side of the join instead of these few thousand rows (twice as slow at 1M modules)."""
    if connection.vendor == "postgresql":
        return (
            f"(SELECT model_id, date_code, MAX(h) AS h FROM unnest(%({p}_m)s::bigint[], %({p}_d)s::text[],"  # noqa: S608 - fixed SQL with parameter placeholders; no value is interpolated
            f" %({p}_h)s::float8[]) AS hz(model_id, date_code, h) GROUP BY model_id, date_code)"
        )
    return (
        "(SELECT json_extract(value, '$[0]') AS model_id, json_extract(value, '$[1]') AS date_code, "  # noqa: S608 - fixed SQL with parameter placeholders; no value is interpolated
        f"json_extract(value, '$[2]') AS h FROM json_each(%({p}_json)s))"
    )


def hazard_params(module_hazard: dict[tuple[int, str], float], p: str = "hz") -> dict:
    items = list(module_hazard.items())
    if connection.vendor == "postgresql":
        return {
            f"{p}_m": [k[0] for k, _ in items],
            f"{p}_d": [k[1] for k, _ in items],
            f"{p}_h": [float(h) for _, h in items],
        }
    return {f"{p}_json": json.dumps([[k[0], k[1], float(h)] for k, h in items])}


def id_in_sql(col: str, param: str) -> str:
    if connection.vendor == "postgresql":
        return f"{col} = ANY(%({param})s)"
    return f"{col} IN (SELECT value FROM json_each(%({param})s))"  # noqa: S608 - fixed SQL with parameter placeholders; no value is interpolated


def fence_sql() -> str:
    """Keeps the planner from inlining a subquery (so its columns are computed once per row)."""
    return " OFFSET 0" if connection.vendor == "postgresql" else " LIMIT -1 OFFSET 0"
