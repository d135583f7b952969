"""The rollup on PostgreSQL: one set-based statement per chunk of ports, no raw row in Python.

``rollup_ports_sql`` computes the buckets of the dirty ports from each port's dirty time
(aligned down to its bucket) and merges them into ``PortRollup`` with ``INSERT ... ON CONFLICT
DO UPDATE``; the same statement moves each port's ``PortTelemetryState.last_ts`` forward.
Only the samples from the dirty time on are read, plus, per port, the one sample before it
(the predecessor of the first interval, found through the (port, ts) key within the
lookback), so a run reads what arrived and not the lookback window again. A port with no
histogram and no lane row in that range (counters only, as most collectors send most of the
time) reads its samples alone: one look into each of those two tables per port instead of one
per sample.

The semantics are those of ``inventory.core.telemetry.rollup.rollup_port`` (the pure core,
which SQLite and the odd ports below still use):

* consecutive samples of a port come from ``lag()`` over (port, ts); a counter's increase is
  ``rates.step`` written in SQL on the stored (offset) values in ``bigint``: a rise within
  ``MAX_INCREASE`` counts, a larger rise is a reset that adds nothing, a drop from the top
  quarter of the 64-bit range to the bottom quarter is a wrap, any other drop a reset counted
  from the new value (or from nothing past ``MAX_INCREASE``); bucket sums saturate at
  ``MAX_INCREASE``;
* a FEC histogram's increase is per bin against the port's previous histogram of the same
  layout (any bin dropping, or a length change, is a reset counted from the new counts), its
  warn/crit codewords judged by ``rates.bin_severity``'s thresholds of the layout's limit;
* gauges are min/max/mean of the bucket's samples, lane minima lane by lane; the identity is
  the port's last observation before the bucket's end; pre-FEC BER from corrected bits over
  the line bits when the line rate is known, else the mean reported gauge.

The pure core takes "the previous value" of a counter as the last sample that carried it;
``lag()`` takes the previous sample. They differ only when a port's samples carry a counter
(or a histogram) in some samples and not in others: such ports are returned as ``odd`` and
the caller rolls them up with the pure core. Collectors send the same fields every time, so
that path is rare.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection

from inventory.conf import app_settings
from inventory.core.telemetry.decode import MAX_LANES
from inventory.core.telemetry.rates import LANE_SIGNALLING_GBPS, MAX_INCREASE
from inventory.core.telemetry.rollup import IDENTITY, ROLLUP_COUNTERS
from inventory.models import (
    FecBinLayout,
    Link,
    Port,
    PortObservation,
    PortRollup,
    PortTelemetryState,
    TelemetryHistogram,
    TelemetryLaneSample,
    TelemetrySample,
)

_MAX = MAX_INCREASE
_Q = 1 << 62  # a quarter of the unsigned 64-bit range, in the stored (offset) scale


def _counter_step(c: str) -> tuple[str, str]:
    """SQL for one counter's increase over the previous sample, and its reset flag (0/1).

    In ``bigint`` throughout (no ``numeric``: it cost about a fifth of the statement): every
    increase the rules count fits (``rates.step`` never yields more than ``MAX_INCREASE``), and
    each sum below is ordered so that no intermediate overflows. ``CASE`` (not ``OR``) orders
    the tests, so ``prev + MAX`` is only computed where ``prev`` is negative."""
    cur, prev = f"s.{c}", f"s.p_{c}"
    # cur >= prev: the rise cur - prev, which is at most MAX unless prev < 0 and cur passes prev + MAX
    rise_ok = f"CASE WHEN {prev} >= 0 THEN true ELSE {cur} <= {prev} + {_MAX} END"
    inc = (
        f"CASE WHEN {cur} IS NULL OR {prev} IS NULL THEN NULL "
        f"WHEN {cur} >= {prev} THEN CASE WHEN {rise_ok} THEN {cur} - {prev} ELSE 0::bigint END "
        # a wrap: 2**64 + cur - prev, as (cur + 2**63) + (2**63 - 1 - prev) + 1
        f"WHEN {prev} >= {_Q} AND {cur} < -{_Q} THEN ({cur} + {_MAX} + 1) + ({_MAX} - {prev}) + 1 "
        # a reset counted from the new value (its unsigned value: cur + 2**63)
        f"WHEN {cur} < 0 THEN {cur} + {_MAX} + 1 ELSE 0::bigint END"
    )
    reset = (
        f"CASE WHEN {cur} IS NULL OR {prev} IS NULL THEN 0 "
        f"WHEN {cur} >= {prev} THEN CASE WHEN {rise_ok} THEN 0 ELSE 1 END ELSE 1 END"
    )
    return inc, reset


def _saturated(total: str) -> str:
    """A bucket's summed increase as its bigint column holds it (null stays null: ``least()``
    would skip it)."""
    return f"(CASE WHEN {total} > {_MAX} THEN {_MAX} ELSE {total} END)::bigint"


# Lanes and histogram bins are read by fixed subscripts (plain expressions, no per-row subquery);
# a port with a histogram of more bins goes to the pure core (lanes: the decoder's own bound).
SQL_LANES = MAX_LANES
SQL_BINS = 16


def _bins() -> tuple[str, str, str, str, str]:
    """Per-row histogram SQL: the reset test, the increases v1..vN, and warn / crit / highest
    bin over them (``rates.hist_increase`` and ``rates.bin_severity``)."""
    n = range(1, SQL_BINS + 1)
    dropped = " OR ".join(f"coalesce(s.hc[{i}] < s.p_hc[{i}], false)" for i in n)
    incs = ", ".join(
        f"CASE WHEN s.same_layout AND NOT s.dropped THEN s.hc[{i}] - s.p_hc[{i}] ELSE s.hc[{i}] END AS v{i}"
        for i in n
    )
    warn = " + ".join(
        f"coalesce(CASE WHEN s.bin_low[{i}] * 5 >= s.lim * 2 AND s.bin_low[{i}] * 5 < s.lim * 4 THEN s.v{i} END, 0)"
        for i in n
    )
    crit = " + ".join(f"coalesce(CASE WHEN s.bin_low[{i}] * 5 >= s.lim * 4 THEN s.v{i} END, 0)" for i in n)
    top = ", ".join(f"CASE WHEN s.v{i} > 0 AND s.bin_low[{i}] > 0 THEN s.bin_high[{i}] END" for i in n)
    return (
        f"(cardinality(s.hc) <> cardinality(s.p_hc) OR {dropped})",
        incs,
        f"CASE WHEN s.lim > 0 THEN {warn} ELSE 0 END",
        f"CASE WHEN s.lim > 0 THEN {crit} ELSE 0 END",
        f"greatest({top})",
    )


def _lanes() -> tuple[str, str]:
    """Per-bucket lane minima: lane by lane, as long as the bucket's longest list."""
    n = range(1, SQL_LANES + 1)
    out = []
    for col in ("rx", "tx"):
        mins = ", ".join(f"min({col}[{i}])" for i in n)
        out.append(f"(ARRAY[{mins}])[1:max(cardinality({col}))]")
    return out[0], out[1]


def _statement() -> str:
    qn = connection.ops.quote_name
    sample = qn(TelemetrySample._meta.db_table)
    hist = qn(TelemetryHistogram._meta.db_table)
    lanes = qn(TelemetryLaneSample._meta.db_table)
    layout = qn(FecBinLayout._meta.db_table)
    port = qn(Port._meta.db_table)
    link = qn(Link._meta.db_table)
    obs = qn(PortObservation._meta.db_table)
    rollup = qn(PortRollup._meta.db_table)
    state = qn(PortTelemetryState._meta.db_table)
    counters = list(ROLLUP_COUNTERS)
    sample_cols = [
        "s.port_id",
        "s.ts",
        *(f"s.{c}" for c in counters),
        "s.pre_fec_ber",
        "s.post_fec_ber",
        "s.temperature_c",
        "s.speed_gbps",
        "s.link_width",
    ]
    raw_cols = ", ".join([*sample_cols, "h.layout_id AS hl", "h.counts AS hc"])
    plain_cols = ", ".join([*sample_cols, "NULL::bigint AS hl", "NULL::bigint[] AS hc"])  # no histogram
    lags = ", ".join(f"lag(r.{c}) OVER w AS p_{c}" for c in counters)
    # a counter (or the histogram) appearing after a sample without it, past the first sample:
    # the pure core would reach further back than lag() does (see the module docstring); and
    # histograms wider than the SQL reads
    odd = " OR ".join(
        [f"(s.{c} IS NOT NULL AND s.p_{c} IS NULL)" for c in counters]
        + ["(s.hc IS NOT NULL AND s.p_hc IS NULL)", f"coalesce(cardinality(s.hc) > {SQL_BINS}, false)"]
    )
    steps = [_counter_step(c) for c in counters]
    incs = ", ".join(f"{inc} AS d_{c}" for c, (inc, _) in zip(counters, steps, strict=True))
    resets = " + ".join(reset for _, reset in steps)
    sums = ", ".join(f"{_saturated(f'sum(d_{c})')} AS {c}" for c in counters)
    sig = ", ".join(f"({k}, {float(v)!r}::float8)" for k, v in LANE_SIGNALLING_GBPS.items())
    ident = ", ".join(f"coalesce(ob.{k}, '')" for k in IDENTITY)
    ident_cols = ", ".join(f"o.{k}" for k in IDENTITY)
    dropped, bin_incs, warn, crit, top = _bins()
    rx_min, tx_min = _lanes()
    out_cols = [
        "port_id",
        "bucket",
        "seconds",
        "samples",
        "covered_s",
        "resets",
        *counters,
        "line_bits",
        "pre_fec_ber",
        "pre_fec_ber_max",
        "post_fec_ber_max",
        "hist_layout_id",
        "fec_correction_limit",
        "hist_cw_warn",
        "hist_cw_crit",
        "hist_max_bin_high",
        "rx_power_min_dbm",
        "tx_power_min_dbm",
        "rx_power_min_any_dbm",
        "temperature_max_c",
        "speed_gbps_min",
        "link_width_min",
        *IDENTITY,
        "computed_at",
    ]
    update = ", ".join(f"{qn(c)} = EXCLUDED.{qn(c)}" for c in out_cols[2:])
    # every table is reached per port through its (port, ts) key (LATERAL): a chunk reads its
    # ports' new rows, never a whole table, whatever the planner thinks of the chunk's size
    return f"""
WITH dirty AS (
    -- each port's dirty time (epoch seconds) aligned down to its bucket
    SELECT d.port_id, date_bin(%(width)s * interval '1 second', to_timestamp(d.since), timestamptz '1970-01-01 00:00:00+00') AS since,
           -- read up to the end of the bucket of the newest sample the run's queue rows
           -- announced; if the stored sample right after it lies in a later bucket that is
           -- already rolled up (these are late samples), up to the end of that bucket too: a
           -- late sample changes the interval of the sample after it, and of no other (the ones
           -- after that keep their predecessors), and a predecessor counts within the lookback
           -- only. A bucket not rolled up yet is computed by its own queue row. Not up to the
           -- port's newest sample: a collector replaying a backlog older than what is rolled up
           -- had every run re-read the rest of it (a quadratic drain: 26 s a run of 50 batches
           -- at 4,096 GPUs). Without an announced newest ('Infinity'), unbounded, up to
           -- 'infinity' itself (a stored 'infinity' is read, fails and is set aside)
           CASE WHEN d.until = 'Infinity' THEN timestamptz 'infinity'
                ELSE greatest(
                    date_bin(%(width)s * interval '1 second', to_timestamp(d.until), timestamptz '1970-01-01 00:00:00+00'),
                    nb.bucket
                ) + %(width)s * interval '1 second' - interval '1 microsecond' END AS until
      FROM unnest(%(ports)s::bigint[], %(since)s::float8[], %(until)s::float8[]) AS d(port_id, since, until)
      LEFT JOIN LATERAL (
          SELECT b.bucket FROM (
              SELECT date_bin(%(width)s * interval '1 second', nx.ts, timestamptz '1970-01-01 00:00:00+00') AS bucket
                FROM {sample} nx
               WHERE nx.port_id = d.port_id AND nx.ts > to_timestamp(d.until)
                 AND nx.ts <= to_timestamp(d.until) + %(lookback)s * interval '1 second'
               ORDER BY nx.ts LIMIT 1
          ) b
          WHERE EXISTS (SELECT 1 FROM {rollup} r WHERE r.port_id = d.port_id AND r.bucket = b.bucket)
      ) nb ON d.until <> 'Infinity'
),
line AS MATERIALIZED (  -- each port's lanes and lane rate, once per port (not per bucket)
    SELECT p.id AS port_id, greatest(p.lane_count, 1) AS lanes,
           coalesce(
               (SELECT max(l.lane_rate_gbaud) FROM {link} l
                 WHERE l.active AND l.lane_rate_gbaud > 0 AND (l.a_port_id = p.id OR l.b_port_id = p.id)),
               (SELECT sig.gbps FROM (VALUES {sig}) AS sig(nominal, gbps) WHERE sig.nominal = p.speed_gbps / p.lane_count)
           ) AS gbps
    FROM {port} p WHERE p.id = ANY(%(ports)s::bigint[])
),
span AS (  -- whether a port has any histogram or lane row to read: most samples carry neither
    SELECT d.*, (
        EXISTS (SELECT 1 FROM {hist} h WHERE h.port_id = d.port_id AND h.ts >= d.since AND h.ts <= d.until)
        OR EXISTS (SELECT 1 FROM {lanes} l WHERE l.port_id = d.port_id AND l.ts >= d.since AND l.ts <= d.until)
    ) AS rich
    FROM dirty d
),
raw AS (
    SELECT n.*, d.since FROM span d CROSS JOIN LATERAL (
        SELECT {raw_cols}, l.rx_power_dbm AS rx, l.tx_power_dbm AS tx
        FROM {sample} s
        LEFT JOIN {hist} h ON h.port_id = s.port_id AND h.ts = s.ts AND h.ts >= d.since AND h.ts <= d.until
        LEFT JOIN {lanes} l ON l.port_id = s.port_id AND l.ts = s.ts AND l.ts >= d.since AND l.ts <= d.until
        WHERE s.port_id = d.port_id AND s.ts >= d.since AND s.ts <= d.until
    ) n WHERE d.rich
    UNION ALL
    -- the same rows for a port without any: no per-sample probe of the two tables
    SELECT n.*, d.since FROM span d CROSS JOIN LATERAL (
        SELECT {plain_cols}, NULL::real[] AS rx, NULL::real[] AS tx
        FROM {sample} s
        WHERE s.port_id = d.port_id AND s.ts >= d.since AND s.ts <= d.until
        OFFSET 0  -- kept a per-port subquery: pulled up, it is planned as a join over the whole table
    ) n WHERE NOT d.rich
    UNION ALL
    SELECT pre.*, NULL::real[], NULL::real[], d.since FROM dirty d CROSS JOIN LATERAL (
        SELECT {raw_cols} FROM {sample} s
        LEFT JOIN {hist} h ON h.port_id = s.port_id AND h.ts = s.ts AND h.ts < d.since
         WHERE s.port_id = d.port_id AND s.ts < d.since AND s.ts >= d.since - %(lookback)s * interval '1 second'
         ORDER BY s.ts DESC LIMIT 1
    ) pre
),
seq AS (
    SELECT r.*, lag(r.ts) OVER w AS p_ts, {lags},
           lag(r.hl) OVER w AS p_hl, lag(r.hc) OVER w AS p_hc
    FROM raw r
    WINDOW w AS (PARTITION BY r.port_id ORDER BY r.ts)
),
step AS (
    SELECT s.port_id, s.ts, s.rx, s.tx,
           date_bin(%(width)s * interval '1 second', s.ts, timestamptz '1970-01-01 00:00:00+00') AS bucket,
           extract(epoch FROM s.ts - s.p_ts)::float8 AS dt,
           CASE WHEN s.fec_corrected_bits IS NOT NULL AND s.p_fec_corrected_bits IS NOT NULL
                THEN extract(epoch FROM s.ts - s.p_ts)::float8 END AS bits_dt,
           {incs},
           {resets} + CASE WHEN s.same_layout AND s.dropped THEN 1 ELSE 0 END AS resets,
           coalesce(s.p_ts IS NOT NULL AND ({odd}), false) AS odd,
           s.pre_fec_ber, s.post_fec_ber, s.temperature_c, s.speed_gbps, s.link_width,
           CASE WHEN s.judged THEN s.hl END AS h_layout,
           CASE WHEN s.judged THEN s.lim END AS h_limit,
           h_warn, h_crit, h_max_hi
    FROM (
        SELECT s.*,
               CASE WHEN s.judged THEN {warn} END AS h_warn,
               CASE WHEN s.judged THEN {crit} END AS h_crit,
               CASE WHEN s.judged THEN {top} END AS h_max_hi
        FROM (
            SELECT s.*, {bin_incs}
            FROM (
                SELECT s.*, fl.bin_low, fl.bin_high, fl.correction_limit AS lim,
                       (s.hc IS NOT NULL AND s.p_hc IS NOT NULL AND fl.id IS NOT NULL) AS judged,
                       CASE WHEN s.hc IS NOT NULL AND s.p_hc IS NOT NULL THEN s.hl = s.p_hl END AS same_layout,
                       CASE WHEN s.hc IS NOT NULL AND s.p_hc IS NOT NULL AND s.hl = s.p_hl THEN {dropped} END AS dropped
                FROM seq s LEFT JOIN {layout} fl ON fl.id = s.hl
                OFFSET 0
            ) s
            OFFSET 0
        ) s
        OFFSET 0
    ) s
    WHERE s.ts >= s.since
),
agg AS (
    SELECT port_id, bucket, count(*) AS samples, coalesce(sum(dt), 0) AS covered_s,
           sum(resets) AS resets, {sums},
           sum(d_fec_corrected_bits)::float8 AS bits_f, sum(bits_dt) AS bits_s,
           avg(pre_fec_ber) AS ber_mean, max(pre_fec_ber) AS ber_max, max(post_fec_ber) AS post_max,
           max(temperature_c) AS temp_max, min(speed_gbps) AS speed_min, min(link_width) AS width_min,
           (array_agg(h_layout ORDER BY ts DESC) FILTER (WHERE h_layout IS NOT NULL))[1] AS h_layout,
           (array_agg(h_limit ORDER BY ts DESC) FILTER (WHERE h_layout IS NOT NULL))[1] AS h_limit,
           {_saturated("sum(h_warn)")} AS h_warn, {_saturated("sum(h_crit)")} AS h_crit,
           max(h_max_hi) AS h_max_hi, max(ts) AS newest, bool_or(odd) AS odd,
           {rx_min} AS rx_min, {tx_min} AS tx_min
    FROM step GROUP BY port_id, bucket
),
judged AS (
    SELECT a.*, bool_or(a.odd) OVER (PARTITION BY a.port_id) AS odd_port FROM agg a
),
ins AS (
    INSERT INTO {rollup} ({", ".join(qn(c) for c in out_cols)})
    SELECT a.port_id, a.bucket, %(width)s, a.samples, a.covered_s, a.resets,
           {", ".join(f"a.{c}" for c in counters)},
           CASE WHEN a.fec_corrected_bits IS NOT NULL AND ln.gbps IS NOT NULL AND a.bits_s > 0
                THEN a.bits_s * ln.lanes * ln.gbps * 1e9 END,
           CASE WHEN a.fec_corrected_bits IS NOT NULL AND ln.gbps IS NOT NULL AND a.bits_s > 0
                THEN a.bits_f / (a.bits_s * ln.lanes * ln.gbps * 1e9)
                ELSE a.ber_mean END,
           a.ber_max, a.post_max, a.h_layout, a.h_limit, a.h_warn, a.h_crit, a.h_max_hi,
           a.rx_min, a.tx_min, (SELECT min(x) FROM unnest(a.rx_min) x), a.temp_max, a.speed_min, a.width_min,
           {ident}, %(now)s
    FROM judged a
    LEFT JOIN line ln ON ln.port_id = a.port_id
    LEFT JOIN LATERAL (
        SELECT {ident_cols} FROM {obs} o
         WHERE o.port_id = a.port_id AND o.ts < a.bucket + %(width)s * interval '1 second'
         ORDER BY o.ts DESC LIMIT 1
    ) ob ON true
    WHERE NOT a.odd_port
    ON CONFLICT (port_id, bucket) DO UPDATE SET {update}
    RETURNING 1
),
seen AS (  -- each port's PortTelemetryState.last_ts moves forward to its newest sample
    INSERT INTO {state} (port_id, last_ts, {", ".join(IDENTITY)})
    SELECT port_id, max(newest), {", ".join("''" for _ in IDENTITY)} FROM judged WHERE NOT odd_port GROUP BY port_id
    ON CONFLICT (port_id) DO UPDATE SET last_ts = EXCLUDED.last_ts
    WHERE {state}.last_ts IS NULL OR {state}.last_ts < EXCLUDED.last_ts
    RETURNING 1
)
SELECT port_id, max(newest), count(*), bool_or(odd_port) FROM judged GROUP BY port_id
"""  # noqa: S608 - table and column names from model _meta and the core's constants, quoted; values are parameters


@dataclass
class SqlRollup:
    buckets: int
    odd: list[int]  # ports the pure core must roll up (see the module docstring)


_PREPARED = "cabletrack_rollup_chunk_v4"  # a new name whenever its text changes: a pooled session may hold the old one


def _execute(cur) -> None:
    """Prepare the statement once per database session (its plan costs more than running it on
    a chunk), with a generic plan and without JIT (compiling its expressions costs seconds).
    Session-level: a transaction-pooling proxy in front of PostgreSQL would need it per
    transaction instead (none is deployed)."""
    cur.execute("SELECT 1 FROM pg_prepared_statements WHERE name = %s", [_PREPARED])
    if cur.fetchone() is None:
        sql = _statement() % {
            "ports": "$1",
            "since": "$2",
            "lookback": "$3",
            "width": "$4",
            "now": "$5",
            "until": "$6",
        }
        cur.execute(f"PREPARE {_PREPARED} (bigint[], float8[], int, int, timestamptz, float8[]) AS {sql}")
    cur.execute("SET LOCAL jit = off")
    # The generic plan is made once per session, perhaps while a new day's partition holds a
    # batch or two; with scans costed at that size it may read the whole partition per chunk
    # (or per port) all day. Every table here is read through its key: no sequential scans.
    cur.execute("SET LOCAL enable_seqscan = off")
    # the two sorts of a 2,000-port chunk (tens of thousands of rows) stay in memory
    cur.execute("SET LOCAL work_mem = '64MB'")
    cur.execute("SET LOCAL plan_cache_mode = force_generic_plan")


def _array(values) -> str:
    """An array literal: psycopg's per-element adaptation of a 2,000-element list (and of its
    datetimes) cost more than a chunk's other Python work."""
    return "{" + ",".join(map(repr, values)) + "}"


EXECUTE = f"EXECUTE {_PREPARED} (%s, %s, %s, %s, %s, %s)"


def execute_arguments(
    since: dict[int, datetime], *, now: datetime, until: dict[int, datetime] | None = None
) -> list:
    """``EXECUTE``'s arguments for a chunk (see ``rollup_ports_sql``), in the prepared order."""
    ports = sorted(since)
    inf = float("inf")
    return [
        _array(ports),
        _array(since[p].timestamp() for p in ports),
        app_settings.telemetry_rollup_lookback_seconds,
        app_settings.telemetry_rollup_seconds,
        now,
        _array(until[p].timestamp() if until and p in until else inf for p in ports),
    ]


def rollup_ports_sql(
    since: dict[int, datetime], *, now: datetime, until: dict[int, datetime] | None = None
) -> SqlRollup:
    """Recompute and merge the buckets of ``since``'s ports from their times (each aligned
    down to its bucket in SQL), and move their ``PortTelemetryState.last_ts`` forward.

    ``until``: each port's newest sample time its queue rows announced; the recompute stops at
    the end of that bucket (or of the port's newest rolled-up sample's, if later). A run behind
    its queue then reads what its own rows brought, not everything queued after them (which
    made a drain quadratic: each run re-read the whole backlog of its ports). Without it, every
    sample from ``since`` on is read."""
    with connection.cursor() as cur:
        _execute(cur)
        cur.execute(EXECUTE, execute_arguments(since, now=now, until=until))
        # the newest sample times are read back here: a stored time no driver can read
        # ('infinity') fails this chunk, which is then narrowed down and set aside
        rows = cur.fetchall()
    buckets = 0
    odd: list[int] = []
    for pid, _newest, n, is_odd in rows:
        if is_odd:
            odd.append(pid)
        else:
            buckets += n
    return SqlRollup(buckets, odd)
