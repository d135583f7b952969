"""The full scan of the link ranking: every active link scored in numpy from four columnar reads."""

from __future__ import annotations

from datetime import datetime

import numpy as np
from django.db import connection

from inventory.core.forecast.risk import RiskWeights, age_factor
from inventory.selectors.forecast.sql import epoch_sql, hazard_rows_sql, table_names


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
    maxes = ", ".join(f"(SELECT MAX(id) FROM {table})" for table in id_tables)  # noqa: S608 - table names from model _meta and SQL pieces of sql.py; values are parameters
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
            parts.append(f"(SELECT string_agg({packed}, ''::bytea) FROM ({sql}) AS s({cols}) WHERE {gate})")  # noqa: S608 - table names from model _meta and SQL pieces of sql.py; values are parameters
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


def score_every_link(cur, params: dict, weights: RiskWeights, k: int, ev_ids: set[int], now: datetime, lap):
    """Score every active link (``base * age factor``) in numpy; return the best ``k`` (ties by
    link id) and the links with evidence as ``(id, base, install epoch)`` rows, and the count.

    Four narrow reads (one statement) instead of one wide join: each installed module once
    (its cage and cohort hazard), the open placements' install times, the links' port ids and
    the ports' cages. numpy joins them by id (``_lookup``), so no module table is joined once
    per link end, and nothing but a few columns of integers and floats leaves the database.
    """
    t = table_names("Link", "Port", "Transceiver", "TransceiverPlacement", "Cage")
    modules, placements, links, ports = _columns(
        cur,
        [
            (
                f"""
                SELECT x.id, x.cage_id, COALESCE(h.h, %(prior)s) FROM {t["Transceiver"]} x
                LEFT JOIN {hazard_rows_sql()} h ON h.model_id = x.model_id AND h.date_code = x.date_code
                WHERE x.cage_id IS NOT NULL
                """,  # noqa: S608 - table names from model _meta and SQL pieces of sql.py; values are parameters
                "iif",
            ),
            (
                f"SELECT transceiver_id, {epoch_sql('installed_at')} FROM {t['TransceiverPlacement']}"  # noqa: S608 - table names from model _meta and SQL pieces of sql.py; values are parameters
                " WHERE removed_at IS NULL",
                "if",
            ),
            (f"SELECT id, a_port_id, b_port_id FROM {t['Link']} WHERE active", "iii"),  # noqa: S608 - table names from model _meta and SQL pieces of sql.py; values are parameters
            (f"SELECT id, cage_id FROM {t['Port']} WHERE cage_id IS NOT NULL", "ii"),  # noqa: S608 - table names from model _meta and SQL pieces of sql.py; values are parameters
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
