"""Adapter edges the shared captures do not reach: each test asserts the samples an adapter makes
(device, port, time, every field) and what it names as ``ignored``, for bodies a collector sends.
Found by mutation testing (``make mutation MUTATION_ARGS=adapters``): each one is a change to the
adapter that no other test noticed."""

from datetime import UTC, datetime

import pytest

from inventory.core.telemetry import adapters

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def ctx(device=None, port=None, **kw):
    return adapters.Context(device=device, port=port, ts=NOW, **kw)


def prometheus(text: str, c=None):
    c = c or ctx()
    return adapters.parse("prometheus", text.encode(), c), c


# --- Prometheus text (node_exporter's ethtool collector, cabletrack_<field>) ---------------------


def test_prometheus_host_label_order_and_the_interface_label():
    """The host is the first of hostname, host, nodename, node; the port the ``device`` label,
    else ``interface``, else ``?port=``."""
    out, _ = prometheus(
        'node_ethtool_link_down_events_phy{node="n",nodename="nn",host="h",hostname="hn",device="eth0"} 1\n'
        'node_ethtool_link_down_events_phy{node="n",nodename="nn",host="h",interface="eth1"} 2\n'
        'node_ethtool_link_down_events_phy{node="n",nodename="nn",interface="eth2"} 3\n'
        'node_ethtool_link_down_events_phy{node="n"} 4\n',
        ctx(device="from-query", port="p9"),
    )
    assert [(s["device"], s["port"], s["link_down_events"]) for s in out] == [
        ("hn", "eth0", 1),
        ("h", "eth1", 2),
        ("nn", "eth2", 3),
        ("n", "p9", 4),
    ]


def test_prometheus_without_host_or_port_label_asks_for_them():
    with pytest.raises(
        adapters.AdapterError, match=r"^Prometheus series without a host label: pass \?device=\.$"
    ):
        prometheus('node_ethtool_link_down_events_phy{device="eth0"} 1\n')
    with pytest.raises(
        adapters.AdapterError,
        match=r"^Prometheus series node_ethtool_link_down_events_phy without an interface label: pass \?port=\.$",
    ):
        prometheus("node_ethtool_link_down_events_phy 1\n", ctx(device="h"))
    with pytest.raises(adapters.AdapterError, match="cabletrack_link_down_events without an interface"):
        prometheus('cabletrack_link_down_events{device="leaf-1"} 1\n')
    with pytest.raises(adapters.AdapterError, match="without a host label"):
        prometheus('cabletrack_link_down_events{port="Ethernet1"} 1\n')


def test_prometheus_cabletrack_series_take_the_query_device_and_port_and_keep_gauges_exact():
    out, c = prometheus(
        "# a comment\n"
        "\n"
        "   cabletrack_link_down_events_total 3.0   \n"
        "cabletrack_temperature_c 41.5\n"
        "cabletrack_voltage_v 3.25\n"
        "cabletrack_post_fec_ber 1.5e-15\n"
        "cabletrack_rx_bits 7\n"
        "cabletrack_total 9\n"
        "cabletrack_rx_power_dbm -2.5\n"
        "up 1\n"
        'node_network_up{device="eth0"} 1\n',
        ctx(device="leaf-1", port="Ethernet1"),
    )
    assert out == [
        {
            "device": "leaf-1",
            "port": "Ethernet1",
            "ts": NOW,
            "link_down_events": 3,
            "temperature_c": 41.5,
            "voltage_v": 3.25,
            "post_fec_ber": 1.5e-15,
            "rx_bits": 7,
        }
    ]
    assert type(out[0]["link_down_events"]) is int
    assert dict(c.report.ignored) == {
        "cabletrack_total": 1,
        "cabletrack_rx_power_dbm": 1,
        "up": 1,
        "node_network_up": 1,
    }


def test_prometheus_series_times_group_samples_and_an_absurd_time_is_left_to_the_item_checks():
    out, _ = prometheus(
        'cabletrack_rx_bits{device="d",port="p"} 1 1764417600000\n'
        'cabletrack_link_down_events{device="d",port="p"} 2 1764417600000\n'
        'cabletrack_rx_bits{device="d",port="p"} 5 1764417660500\n'
        'cabletrack_rx_bits{device="d",port="p"} 6 -1000\n'
        'cabletrack_rx_bits{device="d",port="p"} 8 99999999999999999999\n'
    )
    assert [(s["ts"], s["rx_bits"], s.get("link_down_events")) for s in out] == [
        (datetime(2025, 11, 29, 12, tzinfo=UTC), 1, 2),
        (datetime(2025, 11, 29, 12, 1, 0, 500000, tzinfo=UTC), 5, None),
        (datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC), 6, None),
        (99999999999999999.999, 8, None),
    ]


def test_prometheus_label_values_are_unescaped_and_nan_or_inf_skipped():
    out, c = prometheus(
        'node_ethtool_link_down_events_phy{device="eth\\"0",hostname="h\\\\1"} 2\n'
        'node_ethtool_link_down_events_phy{device="eth1",hostname="h"} NaN\n'
        'node_ethtool_link_down_events_phy{device="eth1",hostname="h"} +Inf\n'
        'node_ethtool_rx_bits_phy{device="eth1",hostname="h"} 10\n'
    )
    assert [(s["device"], s["port"]) for s in out] == [("h\\1", 'eth"0'), ("h", "eth1")]
    assert out[0]["link_down_events"] == 2
    assert "link_down_events" not in out[1]
    assert not c.report.ignored


def test_prometheus_a_fractional_counter_is_named_ignored_not_rounded():
    out, c = prometheus(
        'node_ethtool_link_down_events_phy{device="eth0"} 2.5\n'
        'node_ethtool_rx_corrected_bits_phy{device="eth0"} 1e3\n',
        ctx(device="h"),
    )
    assert out == [{"device": "h", "port": "eth0", "ts": NOW, "fec_corrected_bits": 1000}]
    assert dict(c.report.ignored) == {"node_ethtool_link_down_events_phy": 1}


def test_prometheus_stops_at_the_first_sample_over_the_cap():
    body = 'cabletrack_rx_bits{device="d",port="p1"} 1\ncabletrack_rx_bits{device="d",port="p2"} 1\n'
    out, _ = prometheus(body, ctx(max_items=2))
    assert [s["port"] for s in out] == ["p1", "p2"]
    with pytest.raises(
        adapters.AdapterError, match=r"^Too many samples: more than 1 \(at most 1 per request\)\.$"
    ):
        prometheus(body + "not a line at all {\n", ctx(max_items=1))
    big = "".join(f'cabletrack_rx_bits{{device="d",port="p{i}"}} 1\n' for i in range(1001))
    with pytest.raises(adapters.AdapterError, match=r"more than 1,000 \(at most 1,000 per request\)"):
        prometheus(big, ctx(max_items=1000))


def test_prometheus_bodies_it_cannot_read():
    with pytest.raises(adapters.AdapterError, match=r"^Not a Prometheus text line: 'cabletrack_rx_bits\{'$"):
        prometheus("cabletrack_rx_bits{\n")
    long = "x" * 79 + "yz{"  # the message quotes the first 80 characters
    with pytest.raises(adapters.AdapterError, match=r"^Not a Prometheus text line: 'x{79}y'$"):
        prometheus(long + "\n")
    with pytest.raises(adapters.AdapterError, match=r"^No node_ethtool_\* or cabletrack_\* series found\.$"):
        prometheus("up 1\n# HELP x y\n")
    with pytest.raises(adapters.AdapterError, match="not UTF-8"):
        adapters.parse("prometheus", b"\xff\xfe", ctx())
