"""The set-based rollup (PostgreSQL, ``rollup_sql``) gives the buckets the pure core gives, on
series that exercise every rule (with and without histograms and lanes): resets, a 64-bit wrap, an implausible jump, a histogram that
is cleared and changes layout, ragged lane lists, identities that change, late samples rolled
up after the buckets around them, and a port whose counters come and go (handed to the core).

    [leaf-s Ethernet1/1 .. 1/4]  400G, samples every 10 s for 5 minutes
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.forms.models import model_to_dict

from inventory.core.telemetry.decode import decode_objects
from inventory.models import PortRollup, PortTelemetryState, TelemetryIngestBatch
from inventory.services.telemetry.ingest import telemetry_ingest
from inventory.services.telemetry.rollup import _rollup_ports, telemetry_rollup
from inventory.services.telemetry.rollup_sql import rollup_ports_sql
from tests import factories as f

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)
TOP = (1 << 64) - 1
KP4 = [(i, i) for i in range(16)]
WIDE = [(0, 0), (1, 3), (4, 7), (8, 11), (12, 15)]


def ingest(samples):
    r = telemetry_ingest(decoded=decode_objects(samples, now=NOW, max_future=timedelta(minutes=5)), now=NOW)
    assert not r.errors, r.errors
    return r


def nasty(dev: str, port: str, n: int = 30) -> list[dict]:
    """Every sample carries the same fields; the values misbehave."""
    out = []
    for i in range(n):
        cw = i * 1000 if i < 12 else (i - 12) * 7  # a reset at 12
        bits = (TOP - 50_000 + i * 10_000) % (1 << 64) if i < 20 else (i - 20) * 3  # wraps at 6, resets at 20
        sym = 5 if i == 9 else (TOP if i == 10 else 100 + i)  # 5 -> 2**64-1: implausible
        if i < 15:
            hist, bins = [10**6 + i * 50] + [i * (k + 1) for k in range(15)], KP4
        elif i == 15:
            hist, bins = [3] * 16, KP4  # cleared
        elif i < 22:
            hist, bins = [10 + i] + [i] * 15, KP4
        else:
            hist, bins = [i * 9, i * 5, i * 3, i * 2, i], WIDE  # another layout
        lanes = 4 if i % 7 else 2
        s = f.telemetry_sample(
            dev,
            port,
            T0 + timedelta(seconds=10 * i),
            fec_corrected_codewords=cw,
            fec_uncorrectable_codewords=i // 4,
            fec_corrected_bits=bits,
            fec_symbol_errors=sym,
            link_down_events=i // 10,
            fec_hist=hist,
            fec_hist_bins=bins,
            rx_power_dbm=[-2.0 - ((i * 7 + k) % 5) * 0.1 for k in range(lanes)],
            tx_power_dbm=[1.0 + k * 0.1 for k in range(lanes if i % 3 else 1)],
            temperature_c=40 + (i * 13) % 17,
            pre_fec_ber=1e-9 * (1 + i % 4),
            speed_gbps=400.0 if i % 11 else 200.0,
            link_width=4 if i % 11 else 2,
        )
        if i in (0, 14):
            s["module_serial"] = f"MT-{i}"
        out.append(s)
    return out


def table(ports, *, approx: bool = False) -> list[dict]:
    rows = PortRollup.objects.filter(port__in=ports).order_by("port_id", "bucket")
    out = []
    for r in rows:
        d = model_to_dict(r)
        d.pop("computed_at")
        d["bucket"] = r.bucket
        for k in ("rx_power_min_dbm", "tx_power_min_dbm"):
            d[k] = None if d[k] is None else [round(x, 4) for x in d[k]]
        for k in ("pre_fec_ber", "line_bits", "rx_power_min_any_dbm", "covered_s"):
            if approx and d[k] is not None:
                d[k] = pytest.approx(d[k], rel=1e-9, abs=1e-6)
        out.append(d)
    return out


@pytest.fixture
def ports():
    return f.twin_port_device("leaf-s", cages=4)[1][:4]


@pytest.mark.postgres  # the set-based path is PostgreSQL's
def test_set_based_rollup_equals_the_pure_core(ports):
    a, b, c, d = ports
    series_a = nasty("leaf-s", a.name)
    ingest(series_a[:8] + series_a[14:])  # 8..13 arrive late
    counters_only = nasty("leaf-s", b.name)  # port b: no histogram, no lanes
    for s in counters_only:
        for k in ("fec_hist", "fec_hist_bins", "rx_power_dbm", "tx_power_dbm"):
            del s[k]
    ingest(counters_only)
    gappy = nasty("leaf-s", c.name, 12)
    for i in (4, 5):  # port c: a counter missing in two samples (the core looks past the gap)
        del gappy[i]["fec_corrected_codewords"]
    ingest(gappy)
    # port d: rolled up bucket by bucket as its samples come (each run reads one predecessor)
    series_d = nasty("leaf-s", d.name)
    for k in range(0, 30, 6):
        ingest(series_d[k : k + 6])
        telemetry_rollup(now=NOW)
    out = telemetry_rollup(now=NOW)
    ingest(series_a[8:14])
    telemetry_rollup(now=NOW)
    assert not TelemetryIngestBatch.objects.exists() and out.set_aside == 0
    fast = table(ports, approx=True)
    assert len(fast) == 5 + 5 + 2 + 5
    last_seen = dict(PortTelemetryState.objects.filter(port__in=ports).values_list("port_id", "last_ts"))
    assert last_seen == {p.pk: T0 + timedelta(seconds=290 if p != c else 110) for p in ports}

    core = _compare_with_core(ports, fast)
    by_bucket = {(r["port"], r["bucket"]): r for r in core}
    first = by_bucket[(a.pk, T0)]
    # the rules held: a reset counted from its new value, a wrap, an implausible jump dropped
    assert first["fec_corrected_bits"] == 5 * 10_000 and first["resets"] == 0
    second = by_bucket[(a.pk, T0 + timedelta(minutes=1))]
    # bits: a 64-bit wrap (+10,000) then 5 x 10,000; symbols: +1 x 3, a reset to 5, a jump to
    # 2**64-1 that adds nothing, a wrap to 111 (+112): 4 resets in all
    assert second["fec_corrected_bits"] == 60_000 and second["fec_symbol_errors"] == 120
    assert second["resets"] == 4
    assert by_bucket[(a.pk, T0 + timedelta(minutes=4))]["module_serial"] == "MT-14"
    assert by_bucket[(c.pk, T0 + timedelta(minutes=1))]["fec_corrected_cw"] == 8000  # 3,000 over the gap


@pytest.mark.postgres  # the set-based path is PostgreSQL's
def test_set_based_rollup_hands_back_ports_whose_fields_come_and_go(ports):
    gappy = nasty("leaf-s", ports[0].name, 6)
    del gappy[2]["fec_corrected_bits"]
    ingest(gappy + nasty("leaf-s", ports[1].name, 6))
    out = rollup_ports_sql({ports[0].pk: T0, ports[1].pk: T0}, now=NOW)
    assert out.odd == [ports[0].pk] and out.buckets == 1
    assert list(PortRollup.objects.values_list("port_id", flat=True)) == [ports[1].pk]


def _compare_with_core(ports, fast) -> list[dict]:
    """The pure core's table of ``ports`` from scratch, asserted equal to ``fast`` (the
    set-based rollup's), bucket by bucket and column by column."""
    PortRollup.objects.all().delete()
    _rollup_ports([p.pk for p in ports], T0, now=NOW)  # the pure core, from scratch
    core = table(ports)
    assert [(r["port"], r["bucket"]) for r in core] == [(r["port"], r["bucket"]) for r in fast]
    differ = [
        (x["port"], x["bucket"].time(), k, x[k], y[k])
        for x, y in zip(core, fast, strict=True)
        for k in x
        if x[k] != y[k]
    ]
    assert not differ
    return core


@pytest.mark.postgres  # the set-based path is PostgreSQL's
def test_runs_that_bring_a_sample_or_two_each_give_the_pure_cores_buckets(ports):
    """A site's pace: a collector reports each port every 10 s and the rollup runs every few
    seconds, so a run brings a port one or two new samples of a bucket it has already written
    (and rewrites that bucket), or starts the next one; late samples come after the buckets
    around them are written. Run after run, the table is the pure core's."""
    a, b, c = ports[:3]
    series = {a: nasty("leaf-s", a.name), b: nasty("leaf-s", b.name), c: nasty("leaf-s", c.name)}
    for s in series[b]:  # port b: counters only, without a line rate's lanes
        for k in ("fec_hist", "fec_hist_bins", "rx_power_dbm", "tx_power_dbm"):
            del s[k]
    late = {a: {8, 9}, b: {17}, c: set()}
    i = 0
    for n in [1, 2, 1, 1, 3, 1, 2, 1, 1, 1, 2, 2, 2, 1, 3, 1, 2, 1, 1, 1]:
        batch = {
            p: [s for k, s in enumerate(series[p][i : i + n], start=i) if k not in late[p]] for p in series
        }
        ingest([s for ss in batch.values() for s in ss])
        since = {p.pk: min(datetime.fromisoformat(s["ts"]) for s in ss) for p, ss in batch.items() if ss}
        assert rollup_ports_sql(since, now=NOW).odd == []
        i += n
        if i == 20:  # the late samples arrive, after the buckets around them are written
            ingest([series[p][k] for p in series for k in late[p]])
            since = {p.pk: min(datetime.fromisoformat(series[p][k]["ts"]) for k in late[p]) for p in (a, b)}
            rollup_ports_sql(since, now=NOW)
    assert i == 30
    _compare_with_core(ports[:3], table(ports[:3], approx=True))
