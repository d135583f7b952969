"""The rule window read two ways: PostgreSQL's binary records (``read_columns``) and the cursor
read SQLite uses must give the rules the same window, value by value, whatever is null.

The edge cases are the ones a record layout can get wrong: a null counter or gauge (NaN, not
0), a null lane list against a list of null lanes, lists shorter and longer than the rules'
8 lanes, a newest bucket without lanes, the trained speed only in an older bucket, and ports
with an identity but no lanes."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from inventory.core.choices import DeviceRole
from inventory.db.copy import read_columns
from inventory.models import PortRollup, PortTelemetryState
from inventory.selectors.telemetry import source
from inventory.selectors.telemetry.rule_inputs import WINDOW_FIELDS, pivot
from tests import factories as f

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 5, 12, 0, 30, tzinfo=UTC)
START = NOW.replace(second=0) - timedelta(minutes=15)


@pytest.fixture
def window():
    _, ports = f.twin_port_device("gpu-w", rack=f.RackFactory(name="R-W"), role=DeviceRole.GPU_NODE)
    _, more = f.twin_port_device("leaf-w", rack=f.RackFactory(name="R-W2"), u=30)
    a, b, c, d = ports[0], ports[1], more[0], more[1]
    rows = f.rollup_rows(a, START, 15, rx_dbm=-2.1, tx_dbm=0.7)
    # a: a null counter, a null gauge, a 3-lane list with a null lane, a 9-lane list
    rows[3].fec_uncorrectable_cw = None
    rows[4].pre_fec_ber = None
    rows[5].rx_power_min_dbm = [-1.5, None, -3.25]
    rows[14].rx_power_min_dbm = [-1.0] * 8 + [-9.0]
    rows[14].speed_gbps_min, rows[14].link_width_min = 400.0, 4
    # b: the newest bucket has no lanes at all; speed only in an older bucket, width null
    rows_b = f.rollup_rows(b, START, 15, rx_dbm=-4.0, tx_dbm=-1.0)
    rows_b[14].rx_power_min_dbm = rows_b[14].tx_power_min_dbm = None
    rows_b[14].rx_power_min_any_dbm = None
    rows_b[2].speed_gbps_min = 200.0
    # c: no lanes anywhere, an empty list in one bucket; a big counter past float precision
    rows_c = f.rollup_rows(c, START + timedelta(minutes=5), 6, rx_dbm=-2.0)
    for r in rows_c:
        r.rx_power_min_dbm = r.tx_power_min_dbm = None
        r.rx_power_min_any_dbm = None
    rows_c[0].rx_power_min_dbm = []
    rows_c[1].fec_corrected_cw = 2**62 + 1
    # d: a bucket before the window (not read) and one in it
    rows_d = f.rollup_rows(d, START - timedelta(minutes=3), 4)
    PortRollup.objects.bulk_create(rows + rows_b + rows_c + rows_d)
    PortTelemetryState.objects.create(
        port=a, module_serial=" ab12 ", neighbor_device="leaf-w", neighbor_port="Ethernet1/1"
    )
    PortTelemetryState.objects.create(port=c, neighbor_device="nowhere", rx_power_low_warn_dbm=-9.5)
    return {"a": a.pk, "b": b.pk, "c": c.pk, "d": d.pk}


def _windows():
    kw = {"start": START.timestamp(), "bucket_s": 60.0, "buckets": 15}
    cursor = source._read_cursor(START, NOW)
    cursor.identity = source._identity()
    return pivot(cursor, **kw), pivot(source.read_rollups(start=START, end=NOW), **kw)


@pytest.mark.postgres
def test_binary_records_give_the_rules_the_same_window_as_the_cursor(window):
    by_cursor, by_records = _windows()
    assert by_records.port_id.tolist() == by_cursor.port_id.tolist() == sorted(window.values())
    for name in ("seconds", *WINDOW_FIELDS, "rx_low_warn_dbm", "speed_gbps", "link_width"):
        np.testing.assert_array_equal(getattr(by_records, name), getattr(by_cursor, name), err_msg=name)
    # lanes are float4 on disk: the cursor reads their shortest text, the records their bits
    for name in ("rx_power_dbm", "tx_power_dbm", "rx_power_dbm_b"):
        np.testing.assert_allclose(
            getattr(by_records, name), getattr(by_cursor, name), rtol=1e-6, err_msg=name
        )
    assert by_records.module_serial == by_cursor.module_serial
    assert by_records.neighbor_label == by_cursor.neighbor_label


def test_the_window_holds_what_was_stored(window):
    """The values the edge cases stored reach the rules (both databases)."""
    _, w = _windows()
    row = {int(p): i for i, p in enumerate(w.port_id)}
    a, b, c = row[window["a"]], row[window["b"]], row[window["c"]]
    assert window["d"] in row  # its one bucket inside the window
    assert np.isnan(w.uncorrectable_cw[a, 3]) and w.uncorrectable_cw[a, 2] == 0
    assert np.isnan(w.pre_fec_ber[a, 4])
    assert w.corrected_cw[c, 6] == float(2**62 + 1)
    # a's newest bucket: 8 of its 9 lanes; its 6th bucket: 3 lanes, the 2nd null
    assert w.rx_power_dbm[a].tolist() == [-1.0] * 8
    assert w.rx_power_dbm_b[a, 5, [0, 2]].tolist() == [-1.5, -3.25]
    assert np.isnan(w.rx_power_dbm_b[a, 5, [1, 3, 4]]).all()
    assert w.tx_power_dbm[a, :4] == pytest.approx([0.7] * 4, rel=1e-6)
    # b's newest bucket has no lanes: the one before it is the latest, and its speed is older
    assert w.rx_power_dbm[b, :4].tolist() == [-4.0] * 4 and np.isnan(w.rx_power_dbm_b[b, 14]).all()
    assert w.speed_gbps[b] == 200.0 and np.isnan(w.link_width[b])
    assert (w.speed_gbps[a], w.link_width[a]) == (400.0, 4.0)
    # c reported no lane: nothing latest
    assert np.isnan(w.rx_power_dbm[c]).all()
    assert w.module_serial[a] == "AB12" and w.neighbor_label[a] == "leaf-w:Ethernet1/1"
    assert w.neighbor_label[c] == "nowhere:?" and w.rx_low_warn_dbm[c] == -9.5
    assert w.module_serial[b] is None and w.neighbor_label[b] is None


@pytest.mark.postgres
def test_read_columns_reads_nulls_as_nan_and_many_batches():
    n = 250_001  # more than two fetches
    port, value, lane = read_columns(
        [("g", "i8"), ("CASE WHEN g %% 3 = 0 THEN NULL ELSE g * 0.5 END", "f8"), ("NULL", "f4")],
        "FROM generate_series(1, %s) AS g",
        [n],
    )
    assert port.dtype == np.int64 and port.tolist() == list(range(1, n + 1))
    assert np.isnan(value[2::3]).all() and value[0] == 0.5 and value[-2] == (n - 1) * 0.5
    assert lane.dtype == np.float32 and np.isnan(lane).all()
