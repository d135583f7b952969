"""Adapter edges the shared captures do not reach: each test asserts the samples an adapter makes
(device, port, time, every field) and what it names as ``ignored``, for bodies a collector sends.
Found by mutation testing (``make mutation MUTATION_ARGS=adapters``): each one is a change to the
adapter that no other test noticed."""

import json
import re
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.telemetry import adapters
from inventory.core.telemetry.adapters import common
from inventory.core.telemetry.decode import decode_objects
from tests.paths import TEST_DATA

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


# --- ethtool -m (module EEPROM and DOM) ------------------------------------------------------------

REAL = TEST_DATA / "real"


def _labels(body: bytes) -> Counter:
    """Every ``label : value`` line of an ethtool -m output, by label as ethtool prints it."""
    return Counter(
        " ".join(line.partition(":")[0].split()) for line in body.decode().splitlines() if ":" in line
    )


def test_ethtool_module_sfp_every_reading_threshold_and_flag_of_a_real_capture():
    """An FS SFP-10GSR-85 in an i40e host (SFF-8472): one lane, 20 thresholds in their units
    (mA, dBm, degrees C, V), 20 flags with the module's own "bias low alarm: On"; every other
    line of the output is named in ``ignored``, once per line."""
    body = (REAL / "ethtool_m_sfp_10gsr_fs_i40e.txt").read_bytes()
    c = ctx("gpu-7", "ens1f0")
    [s] = adapters.parse("ethtool-module", body, c)
    thresholds = {
        "bias_high_alarm": 15.0,
        "bias_low_alarm": 2.0,
        "bias_high_warn": 12.0,
        "bias_low_warn": 3.0,
        "tx_power_high_alarm": 2.0,
        "tx_power_low_alarm": -9.5,
        "tx_power_high_warn": 0.0,
        "tx_power_low_warn": -7.5,
        "temperature_high_alarm": 80.0,
        "temperature_low_alarm": -10.0,
        "temperature_high_warn": 70.0,
        "temperature_low_warn": 0.0,
        "voltage_high_alarm": 3.63,
        "voltage_low_alarm": 2.97,
        "voltage_high_warn": 3.465,
        "voltage_low_warn": 3.135,
        "rx_power_high_alarm": 2.0,
        "rx_power_low_alarm": -14.1,
        "rx_power_high_warn": 0.0,
        "rx_power_low_warn": -12.1,
    }
    flags = dict.fromkeys(thresholds, False) | {"bias_low_alarm": True}
    assert s == {
        "device": "gpu-7",
        "port": "ens1f0",
        "ts": NOW,
        "module_vendor": "FS",
        "module_part": "SFP-10GSR-85",
        "module_serial": "F2020533679",
        "temperature_c": 39.18,
        "voltage_v": 3.3544,
        "bias_ma": [6.09],
        "tx_power_dbm": [-1.96],
        "rx_power_dbm": [-1.88],
        "module_thresholds": thresholds,
        "module_flags": flags,
        "rx_power_low_warn_dbm": -12.1,
        "rx_power_low_alarm_dbm": -14.1,
        "temperature_high_warn_c": 70.0,
    }
    read = {"Vendor name", "Vendor PN", "Vendor SN", "Laser bias current", "Laser output power"}
    read |= {"Receiver signal average optical power", "Module temperature", "Module voltage"}
    ignored = {k: n for k, n in _labels(body).items() if k not in read and not common.module_key(k)}
    assert dict(c.report.ignored) == ignored
    assert c.report.ignored["Option"] == 3 and c.report.ignored["Vendor OUI"] == 1


def test_ethtool_module_qsfp28_folds_the_lanes_flags_into_one_per_quantity():
    """A Mellanox 100G-SR4 (SFF-8636) on Cumulus: four channels of bias, Tx and Rx power, in lane
    order; the per-channel flags fold into one per quantity and level, On when any lane's is."""
    body = (REAL / "ethtool_m_qsfp28_sr4_mellanox_cumulus.txt").read_bytes()
    [s] = adapters.parse("ethtool-module", body, ctx("leaf-3", "swp14"))
    assert s["bias_ma"] == [6.75, 6.75, 6.75, 6.75]
    assert s["tx_power_dbm"] == [1.44, 1.20, 1.26, 1.27]
    assert s["rx_power_dbm"] == [-0.12, -0.09, 0.55, 0.55]
    assert (s["temperature_c"], s["voltage_v"]) == (30.56, 3.235)
    assert s["module_flags"] == dict.fromkeys(s["module_thresholds"], False)
    assert len(s["module_thresholds"]) == 20 and s["temperature_high_warn_c"] == 70.0
    # lane 3's Rx power low warning On: the folded flag is On, the other lanes' Off do not undo it
    on = body.replace(
        b"Laser rx power low warning  (Channel 3)   : Off", b"Laser rx power low warning  (Channel 3)   : On"
    )
    [s] = adapters.parse("ethtool-module", on, ctx("leaf-3", "swp14"))
    assert [k for k, v in s["module_flags"].items() if v] == ["rx_power_low_warn"]


def test_ethtool_module_a_lane_out_of_order_or_unreadable_keeps_its_place():
    """Channel numbers place the reading (channel 2 printed first is still lane 2); a lane whose
    value has no number is None in its place, and a missing lane is None too."""
    body = b"""\tVendor SN                                 : X1
\tLaser tx bias current (Channel 2)         : 7.000 mA
\tLaser tx bias current (Channel 1)         : N/A
\tTransmit avg optical power (Channel 3)    : 0.0000 mW / -inf dBm
\tTransmit avg optical power (Channel 1)    : 1.0000 mW / 0.00 dBm
\tRcvr signal avg optical power(Channel 2)  : 0.5000 mW / -3.01 dBm
\tModule temperature                        : -5.50 degrees C / 22.10 degrees F
\tModule voltage                            : unknown
"""
    [s] = adapters.parse("ethtool-module", body, ctx("h", "p"))
    assert s["bias_ma"] == [None, 7.0]
    assert s["tx_power_dbm"] == [0.0, None, None]
    assert s["rx_power_dbm"] == [None, -3.01]
    assert s["temperature_c"] == -5.5
    assert "voltage_v" not in s and "module_flags" not in s and "module_thresholds" not in s


def test_ethtool_module_without_a_module_field_names_what_it_looked_for():
    c = ctx("h", "p")
    with pytest.raises(
        adapters.AdapterError,
        match=r"^No module fields \(Vendor SN, temperature, optical power\) in ethtool -m output\.$",
    ):
        adapters.parse("ethtool-module", b"\tIdentifier : 0x03 (SFP)\n\tConnector : 0x07 (LC)\nno colon\n", c)
    for device, port, word in ((None, "p", "device"), ("h", None, "port")):
        with pytest.raises(
            adapters.AdapterError, match=rf"^ethtool-module output does not name the {word}: pass \?{word}="
        ):
            adapters.parse("ethtool-module", b"\tVendor SN : X1\n", ctx(device, port))


# --- ethtool --show-fec --------------------------------------------------------------------------


def test_ethtool_fec_text_reads_each_block_and_names_every_other_line():
    """Two ports in one output: each block's counters and histogram stay with its port; the
    encodings and any line before the first block are named, not stored."""
    body = b"""ignored preamble: 1
FEC parameters for eth0:
Supported/Configured FEC encodings: Auto RS
Active FEC encoding: RS
Statistics:
  corrected_blocks: 10
  uncorrectable_blocks: 1
  corrected_bits: 70
  fec_bit_err_0: 900
  fec_bit_err_1_to_3: 8
  fec_bit_err_4_to_7: 0
FEC parameters for eth1
  corrected_blocks: 5
"""
    c = ctx("gpu-1")
    out = adapters.parse("ethtool-fec", body, c)
    assert out == [
        {
            "device": "gpu-1",
            "port": "eth0",
            "ts": NOW,
            "fec_corrected_codewords": 10,
            "fec_uncorrectable_codewords": 1,
            "fec_corrected_bits": 70,
            "fec_hist": [900, 8, 0],
            "fec_hist_bins": [[0, 0], [1, 3], [4, 7]],
        },
        {"device": "gpu-1", "port": "eth1", "ts": NOW, "fec_corrected_codewords": 5},
    ]
    assert dict(c.report.ignored) == {
        "Supported/Configured FEC encodings": 1,
        "Active FEC encoding": 1,
        "Statistics": 1,
    }


def test_ethtool_fec_json_reads_totals_or_plain_numbers_and_names_the_rest():
    body = b"""{"ifname": "eth3", "active": ["RS"],
      "statistics": {"corrected_blocks": {"total": 7, "lanes": [3, 4]}, "uncorrectable_blocks": 2,
                     "corrected_bits": {"total": "1,500"}, "pcs_errors": 1}}"""
    c = ctx("gpu-1")
    assert adapters.parse("ethtool-fec", body, c) == [
        {
            "device": "gpu-1",
            "port": "eth3",
            "ts": NOW,
            "fec_corrected_codewords": 7,
            "fec_uncorrectable_codewords": 2,
            "fec_corrected_bits": 1500,
        }
    ]
    assert dict(c.report.ignored) == {"active": 1, "statistics.pcs_errors": 1}
    # no ifname: the port comes from ?port=, and without it the error asks for it
    body = b'[{"statistics": {"corrected_blocks": {"total": 1}}}]'
    assert adapters.parse("ethtool-fec", b"  " + body, ctx("gpu-1", "p9"))[0]["port"] == "p9"
    with pytest.raises(
        adapters.AdapterError, match=r"^ethtool-fec output does not name the port: pass \?port="
    ):
        adapters.parse("ethtool-fec", body, ctx("gpu-1"))


def test_ethtool_fec_bodies_it_cannot_read():
    with pytest.raises(adapters.AdapterError, match=r"^ethtool --json output: expected a list of objects\.$"):
        adapters.parse("ethtool-fec", b'[{"ifname": "eth0"}, 3]', ctx("gpu-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^No 'FEC parameters for <interface>' block found in ethtool output\.$"
    ):
        adapters.parse("ethtool-fec", b"  corrected_blocks: 10\n", ctx("gpu-1", "p"))
    with pytest.raises(
        adapters.AdapterError, match=r"^ethtool-fec output does not name the device: pass \?device="
    ):
        adapters.parse("ethtool-fec", b"FEC parameters for eth0:\n", ctx(None, "p"))


# --- ethtool -S ----------------------------------------------------------------------------------


def test_ethtool_stats_of_a_real_bnxt_en_port_names_the_per_ring_counters():
    """bnxt_en (kernel 4.18, an FS SFP-10GSR-85): port counters read, the 8 rings' ``[N]: name``
    counters and every other port counter named in ``ignored``, none lost."""
    body = (REAL / "ethtool_S_bnxt_en_10g_sr_link_down_2.txt").read_bytes()
    c = ctx("gpu-2", "ens2f0np0")
    [s] = adapters.parse("ethtool-stats", body, c)
    assert (s["device"], s["port"], s["ts"]) == ("gpu-2", "ens2f0np0", NOW)
    assert s["link_down_events"] == 2 and s["rx_bits"] == 58069568243688
    assert s["fec_corrected_codewords"] == 0 and s["fec_uncorrectable_codewords"] == 0
    assert (s["pfc_pause_rx"], s["pfc_pause_tx"], s["pfc_pause_duration_us"]) == (0, 0, 0)
    assert c.report.ignored["[0]: rx_ucast_packets"] == 1 and c.report.ignored["[7]: rx_ucast_packets"] == 1
    assert "link_down_events" not in c.report.ignored and "pfc_pri0_tx_transitions" in c.report.ignored
    # 397 counter lines: 29 read (5 FEC/bits/link counters, 8 priorities x Rx, Tx and Rx duration)
    counters = [
        line for line in body.decode().splitlines() if line.strip() and line.strip() != "NIC statistics:"
    ]
    assert len(counters) == 397 and sum(c.report.ignored.values()) == 397 - 29


def test_ethtool_stats_names_a_line_that_is_no_counter_and_refuses_a_body_without_one():
    c = ctx("gpu-2", "p1")
    body = b"NIC statistics:\n\n     link_down_events: 4\n     rx_fw_version: 1.2.3\n     speed: unknown\n"
    assert adapters.parse("ethtool-stats", body, c) == [
        {"device": "gpu-2", "port": "p1", "ts": NOW, "link_down_events": 4}
    ]
    assert dict(c.report.ignored) == {"rx_fw_version": 1, "speed": 1}
    with pytest.raises(
        adapters.AdapterError, match=r"^No 'name: value' counters found in ethtool -S output\.$"
    ):
        adapters.parse("ethtool-stats", b"NIC statistics:\n  driver: bnxt_en\n", ctx("gpu-2", "p1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^ethtool-stats output does not name the port: pass \?port="
    ):
        adapters.parse("ethtool-stats", body, ctx("gpu-2"))
    with pytest.raises(
        adapters.AdapterError, match=r"^ethtool-stats output does not name the device: pass \?device="
    ):
        adapters.parse("ethtool-stats", body, ctx(None, "p1"))


def test_ethtool_fec_text_names_a_lower_case_line_it_does_not_read():
    """A statistic the FEC text has no field for, spelt in lower case as the kernel's counters are
    (``pcs_errors``), is named like the capitalised lines (``Statistics``, ``Lane 0``)."""
    body = b"FEC parameters for eth0:\nStatistics:\n  corrected_blocks: 3\n  pcs_errors: 2\n    Lane 0: 1\n"
    c = ctx("gpu-1")
    assert adapters.parse("ethtool-fec", body, c) == [
        {"device": "gpu-1", "port": "eth0", "ts": NOW, "fec_corrected_codewords": 3}
    ]
    assert dict(c.report.ignored) == {"Statistics": 1, "pcs_errors": 1, "Lane 0": 1}


def test_ethtool_module_reads_past_a_line_without_a_colon_and_a_temperature_without_a_number():
    """The command echoed above the output (no colon) does not end the reading; a temperature of
    ``N/A`` is no field, and is not named as unread either (the line was understood)."""
    body = b"ethtool -m eth0\n\tIdentifier : 0x03 (SFP)\n\tVendor SN : FS1\n\tModule temperature : N/A\n\tModule voltage : 3.3 V\n"
    c = ctx("gpu-1", "eth0")
    assert adapters.parse("ethtool-module", body, c) == [
        {"device": "gpu-1", "port": "eth0", "ts": NOW, "module_serial": "FS1", "voltage_v": 3.3}
    ]
    assert dict(c.report.ignored) == {"Identifier": 1}


def test_ethtool_module_vendor_strings_holding_a_colon_stay_whole():
    """Vendor name, PN and SN are the EEPROM's free ASCII, printed as stored: a colon in one is
    part of the value; the OUI's colons do not change its label."""
    body = (
        b"\tVendor name : Acme:Optics\n\tVendor OUI : 00:1b:21\n\tVendor PN : SFP:10G\n"
        b"\tVendor SN : MT17:06FT\n"
    )
    c = ctx("gpu-1", "eth0")
    assert adapters.parse("ethtool-module", body, c) == [
        {
            "device": "gpu-1",
            "port": "eth0",
            "ts": NOW,
            "module_vendor": "Acme:Optics",
            "module_part": "SFP:10G",
            "module_serial": "MT17:06FT",
        }
    ]
    assert dict(c.report.ignored) == {"Vendor OUI": 1}


def test_ethtool_stats_names_a_line_that_is_no_counter_by_what_precedes_its_first_colon():
    """A line that is no counter whose value holds colons (a time) is named by its label only."""
    body = b"NIC statistics:\n     link_down_events: 4\n     last reset: 2026-12-01 12:00:01\n"
    c = ctx("gpu-2", "p1")
    assert adapters.parse("ethtool-stats", body, c) == [
        {"device": "gpu-2", "port": "p1", "ts": NOW, "link_down_events": 4}
    ]
    assert dict(c.report.ignored) == {"last reset": 1}


def test_map_ethtool_stats_gives_the_sample_fields_of_driver_counters():
    """The Prometheus pull's mapping (``interop/prometheus.py``): the fields only, counters with no
    field left out."""
    from inventory.core.telemetry.adapters.ethtool import map_ethtool_stats

    assert map_ethtool_stats({"rx_corrected_bits_phy": 5, "link_down_events_phy": 2, "rx_bytes": 9}) == {
        "fec_corrected_bits": 5,
        "link_down_events": 2,
    }


# --- what every adapter shares (adapters/common.py) -----------------------------------------------


@pytest.mark.parametrize(
    ("printed", "number"),
    [
        ("136,403", 136403),  # a thousands separator (SONiC's tables)
        (" 42 ", 42),
        ("1.18e-12", 1.18e-12),
        ("-3.5", -3.5),
        (7, 7),
        (2.5, 2.5),
        ("N/A", None),
        ("na", None),
        ("-", None),
        ("None", None),
        ("", None),
        ("   ", None),
        (None, None),
        (True, None),  # a JSON true is no count
        ("inf", None),
        ("NaN", None),
        ("12 dB", None),
    ],
)
def test_a_number_as_devices_print_it(printed, number):
    value = common.as_number(printed)
    assert value == number and type(value) is type(number)


def test_counters_are_whole_numbers_and_gauges_floats():
    assert common.as_int("3.0") == 3 and type(common.as_int("3.0")) is int
    assert common.as_int("3.5") is None  # a counter with a fraction is no counter
    assert common.as_int("1,000") == 1000 and common.as_int("N/A") is None
    assert common.as_float("7") == 7.0 and type(common.as_float("7")) is float
    assert common.as_float("-") is None


def test_the_fec_named_gives_its_correction_limit():
    """RS(544,514) (KP4) corrects 15 symbols a codeword, RS(528,514) (KR4) 7; other FECs, none known."""
    assert common.limit_from_fec("RS-FEC(544,514)") == 15
    assert common.limit_from_fec("Standard RS-FEC - RS(528,514)") == 7
    assert common.limit_from_fec("Firecode FEC") is None
    assert common.limit_from_fec("") is None and common.limit_from_fec(None) is None


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("Laser bias current high alarm   (Chan 1)", ("bias_high_alarm", False)),
        ("Laser tx bias current low warning (Channel 4)", ("bias_low_warn", False)),
        ("Laser output power high warning threshold", ("tx_power_high_warn", True)),
        ("Laser tx power low alarm (Lane 2)", ("tx_power_low_alarm", False)),
        ("Laser rx power low warning threshold", ("rx_power_low_warn", True)),
        ("Laser receiver power high alarm threshold", ("rx_power_high_alarm", True)),
        ("MODULE  TEMPERATURE high alarm", ("temperature_high_alarm", False)),
        ("Module voltage low warning threshold", ("voltage_low_warn", True)),
        ("Module temperature", None),  # the reading itself
        ("Laser wavelength high alarm", None),  # no such quantity
        ("Module voltage high alarms", None),
        ("Laser bias current high alarm threshold (Chan 1) extra", None),
    ],
)
def test_a_module_flag_or_threshold_label_and_its_key(label, key):
    assert common.module_key(label) == key


def test_thresholds_are_read_in_the_keys_unit_and_flags_fold_on():
    assert common.threshold_value("rx_power_low_warn", "0.0355 mW / -14.50 dBm") == -14.5
    assert common.threshold_value("tx_power_high_alarm", "1.2589 mW / 1.00 dBm") == 1.0
    assert common.threshold_value("tx_power_low_alarm", "0.0000 mW / -inf dBm") is None
    assert common.threshold_value("rx_power_low_alarm", "0.0282 mW") is None  # no dBm figure
    assert common.threshold_value("temperature_low_alarm", "-5.00 degrees C / 23.00 degrees F") == -5.0
    assert common.threshold_value("voltage_high_alarm", "3.6300 V") == 3.63
    assert common.threshold_value("bias_high_alarm", "N/A") is None
    assert [common.on_off(v) for v in (" On", "OFF ", "n/a")] == [True, False, None]
    flags: dict[str, bool] = {}
    for key, on in (("a", False), ("a", True), ("a", False), ("b", None), ("c", False)):
        common.merge_flag(flags, key, on)
    assert flags == {"a": True, "c": False}


def test_the_module_judgement_fields():
    t = {"rx_power_low_warn": -12.1, "rx_power_low_alarm": -14.1, "temperature_high_warn": 70.0}
    assert common.judgement_fields({**t, "voltage_low_warn": None}, {"bias_low_alarm": True}) == {
        "module_thresholds": t,
        "module_flags": {"bias_low_alarm": True},
        "rx_power_low_warn_dbm": -12.1,
        "rx_power_low_alarm_dbm": -14.1,
        "temperature_high_warn_c": 70.0,
    }
    assert common.judgement_fields({"voltage_low_warn": None}, {}) == dict.fromkeys(
        (
            "module_thresholds",
            "module_flags",
            "rx_power_low_warn_dbm",
            "rx_power_low_alarm_dbm",
            "temperature_high_warn_c",
        )
    )


def test_lanes_samples_and_fields_read():
    assert common.lane_list({2: -1.0, 0: -2.0}) == [-2.0, None, -1.0] and common.lane_list({}) is None
    assert common.clean({"a": 0, "b": None, "c": [], "d": [None], "e": ""}) == {"a": 0, "d": [None], "e": ""}
    f = common.Fields({"x": 1, "y": 2, "z": None})
    assert (f.get("x"), f.get("missing", 5), f["z"]) == (1, 5, None)
    f.use("nothing")
    assert f.unused() == ["y"]
    report = common.Report()
    report.ignore(["b", "a", "b", 3])
    assert report.as_dict() == {"count": 4, "fields": {"3": 1, "a": 1, "b": 2}}


def test_bodies_that_are_not_text_or_json_say_so():
    with pytest.raises(adapters.AdapterError, match=r"^Body is not UTF-8 text: 'utf-8' codec can't decode"):
        common.body_text(b"\xff\xfe counters")
    assert common.body_text("µ 1".encode()) == "µ 1"
    with pytest.raises(adapters.AdapterError, match=r"^Body is not valid JSON: "):
        common.body_json(b"{'a': 1}")
    with pytest.raises(
        adapters.AdapterError, match=r"^Duplicate key 'a' in a JSON object: send each key once"
    ):
        common.body_json(b'{"a": 1, "a": 2}')
    assert common.body_json(b'{"a": [1, 2.5]}') == {"a": [1, 2.5]}
    with pytest.raises(
        adapters.AdapterError,
        match=r"^sonic-cli output does not name the device: pass \?device= \(or X-Cabletrack-Device\)\.$",
    ):
        common.need_device(ctx(None, "p"), "sonic-cli")
    with pytest.raises(
        adapters.AdapterError,
        match=r"^xena output does not name the port: pass \?port= \(or X-Cabletrack-Port\)\.$",
    ):
        common.need_port(ctx("d", ""), "xena")
    assert (common.need_device(ctx("d", "p"), "x"), common.need_port(ctx("d", "p"), "x")) == ("d", "p")


# --- SONiC (COUNTERS_DB hashes and the show interfaces counters fec-* tables) --------------------

DATA = TEST_DATA / "telemetry"


def test_sonic_fec_stats_table_every_row_and_column():
    """``show interfaces counters fec-stats`` with the BER columns: one sample a row, counters
    without their thousands separators, BERs as floats; the columns cabletrack does not store
    (STATE, FEC_PRE_BER_MAX) named once per row."""
    body = (DATA / "15_sonic_fec-stats_pre_post_ber_max.txt").read_bytes()
    c = ctx("leaf-9")
    rows = adapters.parse("sonic-cli", body, c)
    assert [r["port"] for r in rows] == [f"Ethernet{n}" for n in range(0, 56, 8)]
    assert rows[0] == {
        "device": "leaf-9",
        "port": "Ethernet0",
        "ts": NOW,
        "fec_corrected_codewords": 56104,
        "fec_uncorrectable_codewords": 0,
        "fec_symbol_errors": 56092,
        "pre_fec_ber": 1.18e-12,
        "post_fec_ber": 0.0,
    }
    assert rows[4]["fec_corrected_codewords"] == 2998448 and type(rows[4]["pre_fec_ber"]) is float
    assert dict(c.report.ignored) == {"STATE": 7, "FEC_PRE_BER_MAX": 7}


def test_sonic_fec_stats_without_ber_columns_or_with_blank_rows():
    body = b"""Last cached time was 2022-07-29 19:34:08.919717
      IFACE    STATE    FEC_CORR    FEC_UNCORR
-----------  -------  ----------  ------------

  Ethernet0        U     136,403            34
  lonely
  Ethernet8        D         N/A             0
"""
    c = ctx("leaf-9")
    assert adapters.parse("sonic-cli", body, c) == [
        {
            "device": "leaf-9",
            "port": "Ethernet0",
            "ts": NOW,
            "fec_corrected_codewords": 136403,
            "fec_uncorrectable_codewords": 34,
        },
        {"device": "leaf-9", "port": "Ethernet8", "ts": NOW, "fec_uncorrectable_codewords": 0},
    ]


def test_sonic_period_output_is_refused_with_its_period():
    body = (TEST_DATA / "real" / "sonic_fec-stats_period_3s.txt").read_bytes()
    with pytest.raises(
        adapters.AdapterError,
        match=r"^This is a SONiC period output \(show \.\.\. -p 3: the increase of each counter over 3 s, "
        r"not the counters since the last clear\)\. cabletrack needs the counters: post the output without -p\.$",
    ):
        adapters.parse("sonic-cli", body, ctx("leaf-9"))
    one = body.replace(b"within 3 seconds period", b"within 1 second period")
    with pytest.raises(adapters.AdapterError, match=r"-p 1: the increase of each counter over 1 s"):
        adapters.parse("sonic-cli", one, ctx("leaf-9"))


def test_sonic_fec_histogram_port_from_the_command_or_the_query():
    body = (DATA / "17_sonic_fec-histogram_Ethernet0.txt").read_bytes()
    [s] = adapters.parse("sonic-cli", body, ctx("leaf-9", "Ethernet4"))
    assert (s["device"], s["port"], s["ts"]) == ("leaf-9", "Ethernet0", NOW)  # the command names it
    assert s["fec_hist"] == [77092897948028, 5529181, 85996, 217] + [0] * 12
    # without the command line: ?port=; a bin missing from the table counts 0 in its place
    table = b"Symbol Errors Per Codeword         Codewords\n--------  ----\nBIN0   10\nBIN2   3\n"
    assert adapters.parse("sonic-cli", table, ctx("leaf-9", "Ethernet4")) == [
        {"device": "leaf-9", "port": "Ethernet4", "ts": NOW, "fec_hist": [10, 0, 3]}
    ]
    with pytest.raises(
        adapters.AdapterError, match=r"^fec-histogram output without the interface: pass \?port=\.$"
    ):
        adapters.parse("sonic-cli", table, ctx("leaf-9"))
    with pytest.raises(adapters.AdapterError, match=r"^fec-histogram output without BIN rows\.$"):
        adapters.parse("sonic-cli", b"Symbol Errors Per Codeword   Codewords\n", ctx("leaf-9", "E0"))
    with pytest.raises(
        adapters.AdapterError,
        match=r"^No 'IFACE' fec-stats table or fec-histogram found in SONiC CLI output\.$",
    ):
        adapters.parse("sonic-cli", b"show interfaces status\n", ctx("leaf-9"))
    with pytest.raises(adapters.AdapterError, match=r"^sonic-cli output does not name the device"):
        adapters.parse("sonic-cli", body, ctx(None, "E0"))


def test_sonic_redis_text_maps_each_oid_to_its_port_name():
    """Two ``hgetall`` listings and the port name map: each hash is the port the map names, a
    ``_last`` RATES name is read as its counter, and the names not read are ignored by name."""
    body = b"""admin@sw:~$ redis-cli -n 2 hget COUNTERS_PORT_NAME_MAP Ethernet4
"oid:0x1000000000004"
admin@sw:~$ redis-cli -n 2 HGETALL "COUNTERS:oid:0x1000000000004"
1) "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES"
2) "100"
3) "SAI_PORT_STAT_IF_IN_OCTETS"
4) "5"
admin@sw:~$ redis-cli -n 2 hgetall "COUNTERS:oid:0x1000000000008"
1) "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES"
2) "3"
admin@sw:~$ redis-cli -n 2 hget "COUNTERS_PORT_NAME_MAP" "Ethernet8"
"oid:0x1000000000008"
"""
    c = ctx("leaf-9")
    assert adapters.parse("sonic-counters", body, c) == [
        {"device": "leaf-9", "port": "Ethernet4", "ts": NOW, "fec_corrected_codewords": 100},
        {"device": "leaf-9", "port": "Ethernet8", "ts": NOW, "fec_uncorrectable_codewords": 3},
    ]
    assert dict(c.report.ignored) == {"SAI_PORT_STAT_IF_IN_OCTETS": 1}
    # an oid the map does not name takes ?port=, and without it the error says what to send
    alone = b'redis-cli -n 2 hgetall "COUNTERS:oid:0x10000000000ff"\n1) "FEC_PRE_BER"\n2) "1e-9"\n'
    assert adapters.parse("sonic-counters", alone, ctx("leaf-9", "Ethernet12"))[0]["port"] == "Ethernet12"
    with pytest.raises(
        adapters.AdapterError,
        match=r"^COUNTERS_DB hash without a port name: pass \?port= or include the port name map\.$",
    ):
        adapters.parse("sonic-counters", alone, ctx("leaf-9"))
    with pytest.raises(adapters.AdapterError, match=r"^No COUNTERS_DB hashes found\.$"):
        adapters.parse("sonic-counters", b"admin@sw:~$ redis-cli keys '*'\n", ctx("leaf-9", "E0"))


def test_sonic_counters_json_flat_keyed_by_port_or_by_key():
    flat = b'{"SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS": "40", "SAI_PORT_STAT_PFC_3_RX_PKTS": "7"}'
    c = ctx("leaf-9", "Ethernet0")
    assert adapters.parse("sonic-counters", b"\n " + flat, c) == [
        {"device": "leaf-9", "port": "Ethernet0", "ts": NOW, "fec_symbol_errors": 40, "pfc_pause_rx": 7}
    ]
    by_port = b'{"Ethernet4": {"FEC_POST_BER": "0"}, "Ethernet8": {"FEC_PRE_BER": "2e-9"}, "meta": 1}'
    out = adapters.parse("sonic-counters", by_port, ctx("leaf-9"))
    assert [(s["port"], s.get("post_fec_ber"), s.get("pre_fec_ber")) for s in out] == [
        ("Ethernet4", 0.0, None),
        ("Ethernet8", None, 2e-9),
    ]
    # a real COUNTERS_DB dump keyed "COUNTERS:oid:...": the key is no port name, ?port= is
    body = (TEST_DATA / "real" / "sonic_counters_db_pfc_est_oid0x1000000000012.json").read_bytes()
    [s] = adapters.parse("sonic-counters", body, ctx("leaf-9", "Ethernet18"))
    assert s["port"] == "Ethernet18" and s["pfc_pause_rx"] > 0
    for rates in (
        b'{"RATES:oid:0x1": {"FEC_PRE_BER": "1e-9"}}',
        b'{"COUNTERS:Ethernet0": {"FEC_PRE_BER": "1"}}',
    ):
        assert adapters.parse("sonic-counters", rates, ctx("leaf-9", "E9"))[0]["port"] == "E9"
    # a gNMI notification (or a list of them) is read as gNMI: the port from its path
    gnmi = (TEST_DATA / "real" / "sonic_gnmi_get_COUNTERS_Ethernet0.json").read_bytes()
    assert adapters.parse("sonic-counters", gnmi, ctx("leaf-9"))[0]["port"] == "Ethernet0"


# --- Junos (show interfaces diagnostics optics / extensive, and the optics RPC reply in XML) -------


def test_junos_optics_of_a_real_qsfp28_every_lane_threshold_and_flag():
    """An et- port with a 4-lane QSFP28 (MX/PTX): per-lane bias, Tx and Rx power in lane order,
    the module's 20 thresholds in their units and 20 flags (lane flags folded); the laser
    temperature and the module's status alarms are no sample field and are named in ``ignored``."""
    body = (TEST_DATA / "real" / "junos_show_interfaces_diagnostics_optics_et_qsfp28_4lanes.txt").read_bytes()
    c = ctx("mx-1")
    [s] = adapters.parse("junos", body, c)
    thresholds = {
        "temperature_high_alarm": 74.0,
        "temperature_low_alarm": -4.0,
        "temperature_high_warn": 70.0,
        "temperature_low_warn": 0.0,
        "voltage_high_alarm": 3.549,
        "voltage_low_alarm": 3.049,
        "voltage_high_warn": 3.45,
        "voltage_low_warn": 3.15,
        "bias_high_alarm": 175.0,
        "bias_low_alarm": 75.0,
        "bias_high_warn": 162.5,
        "bias_low_warn": 87.5,
        "tx_power_high_alarm": 4.5,
        "tx_power_low_alarm": -4.31,
        "tx_power_high_warn": 4.0,
        "tx_power_low_warn": -3.81,
        "rx_power_high_alarm": 5.5,
        "rx_power_low_alarm": -13.6,
        "rx_power_high_warn": 4.5,
        "rx_power_low_warn": -10.6,
    }
    assert s == {
        "device": "mx-1",
        "port": "et-0/0/0",
        "ts": NOW,
        "temperature_c": 48.0,
        "voltage_v": 3.334,
        "bias_ma": [132.255] * 4,
        "tx_power_dbm": [1.30, 0.96, 1.01, 1.56],
        "rx_power_dbm": [1.03, 0.72, 0.97, 1.36],
        "module_thresholds": thresholds,
        "module_flags": dict.fromkeys(thresholds, False),
        "rx_power_low_warn_dbm": -10.6,
        "rx_power_low_alarm_dbm": -13.6,
        "temperature_high_warn_c": 70.0,
    }
    assert c.report.ignored["Laser temperature"] == 4
    assert c.report.ignored["Laser temperature high alarm threshold"] == 1
    assert (
        c.report.ignored["Module not ready alarm"] == 1 and c.report.ignored["Wavelength unlocked alarm"] == 4
    )
    assert not {"Laser bias current", "Module voltage", "Lane 0"} & set(c.report.ignored)


def test_junos_a_lane_flag_on_and_a_reading_without_a_number():
    body = b"""Physical interface: et-0/0/4, Enabled, Physical link is Down
    Module temperature                        :  - Inf
    Module voltage                            :  3.3000 V
  Lane 1
    Laser bias current                        :  7.000 mA
    Laser output power                        :  0.0000 mW / - Inf dBm
    Laser rx power                            :  0.5000 mW / -3.01 dBm
    Laser rx power low alarm                  :  On
  Lane 0
    Laser receiver power low alarm            :  Off
    Receiver signal average optical power     :  0.2500 mW / -6.02 dBm
"""
    c = ctx("mx-1")
    [s] = adapters.parse("junos", body, c)
    assert s == {
        "device": "mx-1",
        "port": "et-0/0/4",
        "ts": NOW,
        "voltage_v": 3.3,
        "bias_ma": [None, 7.0],
        "tx_power_dbm": [None, None],
        "rx_power_dbm": [-6.02, -3.01],
        "module_flags": {"rx_power_low_alarm": True},
    }
    assert not c.report.ignored


def test_junos_extensive_reads_the_fec_counters_not_their_rates():
    body = (TEST_DATA / "real" / "junos_show_interfaces_extensive_ge_vmx.txt").read_bytes()
    text = body.replace(
        b"FEC Corrected Errors                    0", b"FEC Corrected Errors                    1234"
    )
    text = text.replace(
        b"FEC Uncorrected Errors                  0", b"FEC Uncorrected Errors                  5"
    )
    c = ctx("vmx")
    [s] = adapters.parse("junos", text, c)
    assert (s["port"], s["fec_corrected_codewords"], s["fec_uncorrectable_codewords"]) == (
        "ge-0/0/0",
        1234,
        5,
    )
    assert (
        c.report.ignored["FEC Corrected Errors Rate"] == 1
        and c.report.ignored["FEC Uncorrected Errors Rate"] == 1
    )


def test_junos_two_blocks_each_keep_their_own_readings():
    body = b"""Physical interface: xe-0/0/1
    Module temperature                        :  30 degrees C / 86 degrees F
    Laser rx power low warning threshold      :  0.0000 mW / - Inf dBm
Physical interface: xe-0/0/2, Enabled
    Module voltage                            :  3.2000 V
    Something else
Physical interface: xe-0/0/3
    Module voltage                            :  3.1000 V
"""
    c = ctx("mx-1")
    out = adapters.parse("junos", body, c)
    assert out == [
        {"device": "mx-1", "port": "xe-0/0/1", "ts": NOW, "temperature_c": 30.0},
        {"device": "mx-1", "port": "xe-0/0/2", "ts": NOW, "voltage_v": 3.2},
        {"device": "mx-1", "port": "xe-0/0/3", "ts": NOW, "voltage_v": 3.1},
    ]
    assert dict(c.report.ignored) == {"Laser rx power low warning threshold": 1, "Something else": 1}
    with pytest.raises(
        adapters.AdapterError,
        match=r"^No 'Physical interface:' block: not Junos show interfaces diagnostics optics / extensive output\.$",
    ):
        adapters.parse("junos", b"Logical interface ge-0/0/0.0\n", ctx("mx-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^junos output does not name the device: pass \?device="
    ):
        adapters.parse("junos", body, ctx())


def test_junos_xml_optics_of_a_real_reply():
    """napalm's get-interface-optics-diagnostics-information: the dBm elements, thresholds in
    dBm (the mW duplicates ignored), a temperature printed over two lines; a second interface
    without optics is an item with no reading."""
    body = (
        TEST_DATA / "real" / "junos_get-interface-optics-diagnostics-information_xe_sfp_napalm.xml"
    ).read_bytes()
    c = ctx("mx-1")
    out = adapters.parse("junos", body, c)
    s = out[0]
    assert (s["device"], s["port"], s["ts"]) == ("mx-1", "xe-0/0/0", NOW)
    assert (s["bias_ma"], s["tx_power_dbm"], s["rx_power_dbm"]) == ([44.298], [-1.35], [-3.42])
    assert (s["temperature_c"], s["voltage_v"]) == (45.0, 3.315)
    t = s["module_thresholds"]
    assert len(t) == 20 and (t["temperature_low_alarm"], t["temperature_high_warn"]) == (-13.0, 73.0)
    assert (t["tx_power_low_alarm"], t["bias_high_alarm"], t["voltage_low_warn"]) == (-8.01, 85.0, 3.0)
    assert (s["rx_power_low_warn_dbm"], s["rx_power_low_alarm_dbm"], s["temperature_high_warn_c"]) == (
        -18.01,
        -20.0,
        73.0,
    )
    assert s["module_flags"] == dict.fromkeys(t, False)
    assert c.report.ignored["laser-tx-power-low-warn-threshold"] == 1  # the mW duplicate
    assert (
        c.report.ignored["rx-signal-avg-optical-power"] == 1 and c.report.ignored["laser-output-power"] == 1
    )
    assert "laser-output-power-dbm" not in c.report.ignored and "module-voltage" not in c.report.ignored


def test_junos_xml_edges():
    def reply(*interfaces: str) -> bytes:
        return ("<interface-information>" + "".join(interfaces) + "</interface-information>").encode()

    c = ctx("mx-1")
    body = reply(
        "<physical-interface><name> xe-0/0/3 </name><admin-status>up</admin-status><optics-diagnostics>"
        "<laser-rx-optical-power-dbm>-5.00</laser-rx-optical-power-dbm>"
        "<rx-signal-avg-optical-power-dbm>-6.00</rx-signal-avg-optical-power-dbm>"
        "<laser-bias-current>- Inf</laser-bias-current>"
        "<laser-rx-power-low-alarm>ON</laser-rx-power-low-alarm>"
        "<laser-rx-power-low-warn-threshold-dbm>- Inf</laser-rx-power-low-warn-threshold-dbm>"
        "<module-voltage-high-alarm-threshold>3.630</module-voltage-high-alarm-threshold>"
        "<optics-diagnostics-lane-values/>"
        "</optics-diagnostics></physical-interface>",
        "<physical-interface><name>xe-0/0/4</name></physical-interface>",
    )
    assert adapters.parse("junos", b"\n" + body, c) == [
        {
            "device": "mx-1",
            "port": "xe-0/0/3",
            "ts": NOW,
            "rx_power_dbm": [-5.0],  # the first Rx element read, the second named
            "module_flags": {"rx_power_low_alarm": True},
            "module_thresholds": {"voltage_high_alarm": 3.63},
        },
        {"device": "mx-1", "port": "xe-0/0/4", "ts": NOW},
    ]
    assert dict(c.report.ignored) == {
        "admin-status": 1,
        "rx-signal-avg-optical-power-dbm": 1,
        "laser-rx-power-low-warn-threshold-dbm": 1,
        "optics-diagnostics-lane-values": 1,
    }
    with pytest.raises(adapters.AdapterError, match=r"^Junos output: a physical-interface without a name\.$"):
        adapters.parse("junos", reply("<physical-interface><name> </name></physical-interface>"), ctx("mx-1"))
    with pytest.raises(
        adapters.AdapterError,
        match=r"^No physical-interface element: not a Junos get-interface-optics-diagnostics-information or interface-information reply\.$",
    ):
        adapters.parse("junos", reply(), ctx("mx-1"))
    with pytest.raises(adapters.AdapterError, match=r"^Junos XML is not well-formed: "):
        adapters.parse("junos", b"<interface-information>", ctx("mx-1"))
    with pytest.raises(
        adapters.AdapterError,
        match=r"^Junos XML with a DOCTYPE or entity declaration is refused \(an RPC reply has none\)\.$",
    ):
        adapters.parse("junos", b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>', ctx("mx-1"))


# --- gNMI / OpenConfig ---------------------------------------------------------------------------


def test_gnmi_proto_json_with_a_prefix_typed_values_and_decimal64():
    """A gNMI SubscribeResponse as proto-JSON: the prefix's keyed elements name the interface,
    ``uintVal``/``doubleVal``/``stringVal`` and a decimal64 are read as their numbers, the
    notification's nanosecond timestamp is the sample's time."""
    body = b"""{"notification": {"timestamp": "1764417600000000000",
      "prefix": {"elem": [{"name": "interfaces"}, {"name": "interface", "key": {"name": "Ethernet8"}}]},
      "update": [
        {"path": {"elem": [{"name": "ethernet"}, {"name": "state"}, {"name": "counters"},
                           {"name": "in-mac-pause-frames"}]}, "val": {"uintVal": "12"}},
        {"path": {"elem": [{"name": "ethernet"}, {"name": "state"}, {"name": "counters"},
                           {"name": "out-mac-pause-frames"}]}, "val": {"intVal": 3}},
        {"path": {"elem": [{"name": "state"}, {"name": "fec-corrected-blocks"}]}, "val": {"uintVal": 99}},
        {"path": {"elem": [{"name": "state"}, {"name": "fec-uncorrectable-words"}]}, "val": {"stringVal": "4"}},
        {"path": {"elem": [{"name": "state"}, {"name": "fec-symbol-errors"}]}, "val": {"jsonVal": 8}},
        {"path": {"elem": [{"name": "pre-fec-ber"}, {"name": "instant"}]},
         "val": {"decimalVal": {"digits": "25", "precision": 10}}},
        {"path": {"elem": [{"name": "post-fec-ber"}, {"name": "avg"}]}, "val": {"doubleVal": 1e-15}},
        {"path": {"elem": [{"name": "state"}, {"name": "oper-status"}]}, "val": {"stringVal": "UP"}}
      ]}}"""
    c = ctx("leaf-1")
    [s] = adapters.parse("gnmi", body, c)
    assert s == {
        "device": "leaf-1",
        "port": "Ethernet8",
        "ts": datetime.fromtimestamp(1764417600, UTC),
        "pfc_pause_rx": 12,
        "pfc_pause_tx": 3,
        "fec_corrected_codewords": 99,
        "fec_uncorrectable_codewords": 4,
        "fec_symbol_errors": 8,
        "pre_fec_ber": 2.5e-9,
    }
    assert dict(c.report.ignored) == {
        "interfaces/interface/post-fec-ber/avg": 1,
        "interfaces/interface/state/oper-status": 1,
    }


def test_gnmi_times_paths_and_ports_in_every_spelling():
    """A zero or missing timestamp takes the request's time; an old ``element`` path and a
    module-prefixed name are read; an update of one port per time makes one sample each; the
    component ``<if> transceiver`` is interface ``<if>``; a channel index that is no number is lane 0."""
    body = b"""[{"timestamp": 0, "update": [
        {"path": {"element": ["interfaces", "interface", "state", "counters", "in-mac-pause-frames"]},
         "val": 5}]},
       {"notification": [{"timestamp": 1764417601000000000, "update": [
        {"path": "/openconfig-interfaces:interfaces/interface[name=Ethernet1/1]/state/fec-corrected-bits",
         "val": 77},
        {"path": "/components/component[name=Ethernet2 Transceiver]/transceiver/physical-channels/channel[index=x]/state/output-power/instant",
         "val": "-1.5"},
        {"path": "/components/component[name=Ethernet2 Transceiver]/transceiver/state/serial-no", "val": 1234},
        {"path": "/lldp/interfaces/interface[name=Ethernet1/1]/neighbors/neighbor[id=a/b]/state/port-id",
         "val": "Ethernet9"}
       ]}]}]"""
    c = ctx("leaf-1", "Ethernet0")
    out = adapters.parse("gnmi", body, c)
    t = datetime.fromtimestamp(1764417601, UTC)
    assert out == [
        {"device": "leaf-1", "port": "Ethernet0", "ts": NOW, "pfc_pause_rx": 5},
        {
            "device": "leaf-1",
            "port": "Ethernet1/1",
            "ts": t,
            "fec_corrected_bits": 77,
            "neighbor_port": "Ethernet9",
        },
        {"device": "leaf-1", "port": "Ethernet2", "ts": t, "tx_power_dbm": [-1.5], "module_serial": "1234"},
    ]
    assert not c.report.ignored
    with pytest.raises(
        adapters.AdapterError, match=r"^gNMI update without an interface or component name: pass \?port=\.$"
    ):
        adapters.parse("gnmi", body, ctx("leaf-1"))


def test_gnmic_real_capture_of_two_arista_transceivers():
    """gnmic get of two EOS transceivers' channel 0: one sample each, the component named by its
    interface; an empty output-power (no reading) is no field."""
    body = (TEST_DATA / "real" / "gnmic_get_arista_eos_transceiver_channels_Ethernet49-50.json").read_bytes()
    c = ctx("eos-1")
    out = adapters.parse("gnmi", body, c)
    t = datetime.fromtimestamp(1626293085257457373 / 1e9, UTC)
    assert out == [
        {"device": "eos-1", "port": "Ethernet49", "ts": t, "rx_power_dbm": [1.15], "bias_ma": [0.0]},
        {"device": "eos-1", "port": "Ethernet50", "ts": t, "rx_power_dbm": [1.11], "bias_ma": [0.0]},
    ]


def test_gnmi_sonic_counters_and_gnmi_bodies_it_cannot_read():
    body = b"""{"notification": [{"timestamp": 1, "update": [{"path": "COUNTERS/Ethernet4",
      "val": {"SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES": "10", "SAI_PORT_STAT_IF_IN_OCTETS": "1",
              "FEC_PRE_BER": "1e-8"}}]}]}"""
    c = ctx("sonic-1")
    [s] = adapters.parse("gnmi", body, c)
    assert (s["port"], s["fec_corrected_codewords"], s["pre_fec_ber"]) == ("Ethernet4", 10, 1e-8)
    assert s["ts"] == datetime.fromtimestamp(1e-9, UTC)
    assert dict(c.report.ignored) == {"SAI_PORT_STAT_IF_IN_OCTETS": 1}
    with pytest.raises(adapters.AdapterError, match=r"^gNMI JSON: expected objects\.$"):
        adapters.parse("gnmi", b'[{"update": []}, "x"]', ctx("leaf-1"))
    with pytest.raises(adapters.AdapterError, match=r"^No gNMI updates found\.$"):
        adapters.parse("gnmi", b'{"notification": {"update": []}}', ctx("leaf-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^No known OpenConfig or SONiC counters in the gNMI updates\.$"
    ):
        adapters.parse("gnmi", b'{"update": [{"path": "/system/state/hostname", "val": "x"}]}', ctx("leaf-1"))
    with pytest.raises(adapters.AdapterError, match=r"^gnmi output does not name the device: pass \?device="):
        adapters.parse("gnmi", body, ctx())


def test_sonic_redis_text_with_the_whole_port_name_map():
    """``redis-cli hgetall COUNTERS_PORT_NAME_MAP`` (the whole map, as it is usually dumped) names
    the ports of the hashes around it; it is no hash of counters itself. It was read as one: a
    sample on ``?port=`` whose fields were the map's port names, and the oid hash left unnamed."""
    body = b"""admin@sw:~$ redis-cli -n 2 hgetall COUNTERS_PORT_NAME_MAP
1) "Ethernet0"
2) "oid:0x1000000000002"
3) "Ethernet4"
4) "oid:0x1000000000003"
admin@sw:~$ redis-cli -n 2 hgetall "COUNTERS:oid:0x1000000000003"
1) "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS"
2) "17"
"""
    c = ctx("leaf-9")
    assert adapters.parse("sonic-counters", body, c) == [
        {"device": "leaf-9", "port": "Ethernet4", "ts": NOW, "fec_symbol_errors": 17}
    ]
    assert not c.report.ignored


def test_sonic_redis_text_without_the_command_line_or_cut_short():
    """Only the numbered lines (the command not pasted): the port is ``?port=``; a listing cut
    after a name reads the pairs before it."""
    body = b'1) "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES"\n2) "9"\n3) "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS"\n'
    assert adapters.parse("sonic-counters", body, ctx("leaf-9", "Ethernet0")) == [
        {"device": "leaf-9", "port": "Ethernet0", "ts": NOW, "fec_corrected_codewords": 9}
    ]
    # a hash keyed by its port name (not an oid) is that port's
    named = b'redis-cli hgetall "Ethernet12"\n1) "FEC_POST_BER"\n2) "0"\n'
    assert adapters.parse("sonic-counters", named, ctx("leaf-9", "Ethernet0"))[0]["port"] == "Ethernet12"
    keyed = b'{"oid:0x1000000000012": {"FEC_POST_BER": "0"}}'
    assert adapters.parse("sonic-counters", keyed, ctx("leaf-9", "Ethernet18"))[0]["port"] == "Ethernet18"


def test_sonic_fec_stats_a_narrow_table_and_a_short_row():
    """A table of one counter column (port and value: two cells) and a row cut short read what
    they hold."""
    body = b"""    IFACE    FEC_CORR
---------  ----------
Ethernet0         5
"""
    assert adapters.parse("sonic-cli", body, ctx("leaf-9")) == [
        {"device": "leaf-9", "port": "Ethernet0", "ts": NOW, "fec_corrected_codewords": 5}
    ]
    body = b"""    IFACE    STATE    FEC_CORR    FEC_UNCORR
---------  -------  ----------  ------------
Ethernet0        U           7
"""
    assert adapters.parse("sonic-cli", body, ctx("leaf-9"))[0]["fec_corrected_codewords"] == 7


def test_sonic_counters_a_list_of_gnmi_notifications_and_no_device():
    """gnmic's list output is gNMI too; without ``?device=`` the error names the format."""
    gnmi = (TEST_DATA / "real" / "sonic_gnmi_get_COUNTERS_Ethernet0.json").read_bytes()
    body = b"[" + gnmi + b"]"
    assert [s["port"] for s in adapters.parse("sonic-counters", body, ctx("leaf-9"))] == ["Ethernet0"]
    with pytest.raises(
        adapters.AdapterError, match=r"^sonic-counters output does not name the device: pass \?device="
    ):
        adapters.parse("sonic-counters", body, ctx())


def test_junos_xml_reply_with_its_namespaces_and_a_port_without_optics_first():
    """A reply as Junos sends it, in the junos namespace: the elements are read by their local
    names; a port without a module before one with a module does not end the reading."""
    body = b"""<rpc-reply xmlns:junos="http://xml.juniper.net/junos/23.4R1/junos">
<interface-information xmlns="http://xml.juniper.net/junos/23.4R1/junos-interface" junos:style="normal">
  <physical-interface><name>xe-0/0/0</name></physical-interface>
  <physical-interface><name>xe-0/0/1</name><optics-diagnostics>
    <module-voltage>3.3150</module-voltage></optics-diagnostics></physical-interface>
</interface-information></rpc-reply>"""
    assert adapters.parse("junos", body, ctx("mx-1")) == [
        {"device": "mx-1", "port": "xe-0/0/0", "ts": NOW},
        {"device": "mx-1", "port": "xe-0/0/1", "ts": NOW, "voltage_v": 3.315},
    ]
    nameless = b"<interface-information><physical-interface><optics-diagnostics/></physical-interface></interface-information>"
    with pytest.raises(adapters.AdapterError, match=r"^Junos output: a physical-interface without a name\.$"):
        adapters.parse("junos", nameless, ctx("mx-1"))


def test_junos_celsius_attribute_in_xml_and_json_and_the_undeclared_junos_prefix():
    """The temperature to the tenth from ``junos:celsius`` (the text rounds it), in XML and in
    ``| display json`` (``"attributes"``); a reply without its ``rpc-reply``, behind an XML
    declaration, is read with Junos' own prefix declared; any other undeclared prefix is refused."""
    xml = b"""<?xml version="1.0"?>
<interface-information junos:style="normal"><physical-interface><name>ge-0/2/3</name><optics-diagnostics>
<module-temperature junos:celsius="41.1">41 degrees C / 106 degrees F</module-temperature>
<module-temperature-high-alarm-threshold junos:celsius="95.5">95 degrees C / 203 degrees F</module-temperature-high-alarm-threshold>
</optics-diagnostics></physical-interface></interface-information>"""
    json_body = b"""{"interface-information": [{"physical-interface": [{"name": [{"data": "ge-0/2/3"}],
      "optics-diagnostics": [{"module-temperature": [{"data": "41 degrees C / 106 degrees F",
        "attributes": {"junos:celsius": "41.1"}}],
        "module-temperature-high-alarm-threshold": [{"data": "95 degrees C / 203 degrees F",
        "attributes": {"junos:celsius": "95.5"}}]}]}]}]}"""
    expected = [
        {
            "device": "mx-1",
            "port": "ge-0/2/3",
            "ts": NOW,
            "temperature_c": 41.1,
            "module_thresholds": {"temperature_high_alarm": 95.5},
        }
    ]
    assert adapters.parse("junos", xml, ctx("mx-1")) == expected
    assert adapters.parse("junos", json_body, ctx("mx-1")) == expected
    other = xml.replace(b"junos:style", b"acme:style")
    with pytest.raises(adapters.AdapterError, match=r"^Junos XML is not well-formed: unbound prefix"):
        adapters.parse("junos", other, ctx("mx-1"))


def test_ethtool_fec_json_histogram_bins_without_errors_stay_zero():
    body = b"""[{"ifname": "eth4", "statistics": {"hist": [
      {"bin_low": 0, "bin_high": 0, "total": 900}, {"bin_low": 1, "bin_high": 3, "total": 0},
      {"bin_low": 4, "bin_high": 7}]}}]"""
    [s] = adapters.parse("ethtool-fec", body, ctx("gpu-1"))
    assert (s["fec_hist"], s["fec_hist_bins"]) == ([900, 0, 0], [[0, 0], [1, 3], [4, 7]])


# --- Junos per-lane optics in XML and | display json (hand-written from the element names) -------
# Hand-written samples, not proof: no public real capture of a multi-lane reply with a usable
# licence was found. The element names are those Junos writes (PyEZ/napalm tables, czerwonk's
# junos_exporter structs, a QFX EVO reply seen in a public repository without a licence); the
# values are those of the real text capture of et-0/0/0 (a 4-lane QSFP28), so that the three
# forms of the same module must store the same readings.

_QSFP28_LANES = (  # bias mA, Tx mW, Tx dBm, Rx mW, Rx dBm: the text capture's Lane 0..3
    ("132.255", "1.348", "1.30", "1.267", "1.03"),
    ("132.255", "1.248", "0.96", "1.180", "0.72"),
    ("132.255", "1.262", "1.01", "1.250", "0.97"),
    ("132.255", "1.432", "1.56", "1.368", "1.36"),
)
_QSFP28_THRESHOLDS = (  # element, text, junos:celsius
    ("module-temperature-high-alarm-threshold", "74 degrees C / 165 degrees F", "74"),
    ("module-temperature-low-alarm-threshold", "-4 degrees C / 25 degrees F", "-4"),
    ("module-temperature-high-warn-threshold", "70 degrees C / 158 degrees F", "70"),
    ("module-temperature-low-warn-threshold", "0 degrees C / 32 degrees F", "0"),
    ("module-voltage-high-alarm-threshold", "3.5490", None),
    ("module-voltage-low-alarm-threshold", "3.0490", None),
    ("module-voltage-high-warn-threshold", "3.4500", None),
    ("module-voltage-low-warn-threshold", "3.1500", None),
    ("laser-bias-current-high-alarm-threshold", "175.000", None),
    ("laser-bias-current-low-alarm-threshold", "75.000", None),
    ("laser-bias-current-high-warn-threshold", "162.500", None),
    ("laser-bias-current-low-warn-threshold", "87.500", None),
    ("laser-tx-power-high-alarm-threshold", "2.8180", None),
    ("laser-tx-power-high-alarm-threshold-dbm", "4.50", None),
    ("laser-tx-power-low-alarm-threshold", "0.3710", None),
    ("laser-tx-power-low-alarm-threshold-dbm", "-4.31", None),
    ("laser-tx-power-high-warn-threshold", "2.5110", None),
    ("laser-tx-power-high-warn-threshold-dbm", "4.00", None),
    ("laser-tx-power-low-warn-threshold", "0.4160", None),
    ("laser-tx-power-low-warn-threshold-dbm", "-3.81", None),
    ("laser-rx-power-high-alarm-threshold", "3.5481", None),
    ("laser-rx-power-high-alarm-threshold-dbm", "5.50", None),
    ("laser-rx-power-low-alarm-threshold", "0.0437", None),
    ("laser-rx-power-low-alarm-threshold-dbm", "-13.60", None),
    ("laser-rx-power-high-warn-threshold", "2.8184", None),
    ("laser-rx-power-high-warn-threshold-dbm", "4.50", None),
    ("laser-rx-power-low-warn-threshold", "0.0871", None),
    ("laser-rx-power-low-warn-threshold-dbm", "-10.60", None),
    ("laser-temperature-high-alarm-threshold", "57 degrees C / 135 degrees F", "57"),
)
_LEVELS = ("high-alarm", "low-alarm", "high-warn", "low-warn")
_LANE_FLAGS = tuple(
    f"{q}-{lvl}"
    for q in ("laser-bias-current", "laser-tx-power", "laser-temp", "laser-rx-power")
    for lvl in _LEVELS
) + ("tx-loss-of-signal-functionality-alarm", "rx-loss-of-signal-alarm", "tx-laser-disabled-alarm")


def _qsfp28_lane(index, lane, flags=None):
    bias, tx_mw, tx_dbm, rx_mw, rx_dbm = lane
    flags = flags or {}
    return [
        ("lane-index", str(index), None),
        ("laser-bias-current", bias, None),
        ("laser-output-power", tx_mw, None),
        ("laser-output-power-dbm", tx_dbm, None),
        ("laser-temperature", "46 degrees C / 114 degrees F", "46"),
        ("laser-rx-optical-power", rx_mw, None),
        ("laser-rx-optical-power-dbm", rx_dbm, None),
        *((flag, flags.get(flag, "Off"), None) for flag in _LANE_FLAGS),
    ]


def _qsfp28_module(lanes):
    """et-0/0/0's optics-diagnostics: (element, text, celsius) rows and lane blocks in order."""
    return [
        ("module-temperature", "48 degrees C / 119 degrees F", "48"),
        ("module-voltage", "3.3340", None),
        *((f"module-{q}-{lvl}", "Off", None) for q in ("temperature", "voltage") for lvl in _LEVELS),
        *_QSFP28_THRESHOLDS,
        *(("optics-diagnostics-lane-values", lane) for lane in lanes),
    ]


def _junos_xml(port, rows):
    def render(rows):
        out = []
        for tag, value, *celsius in rows:
            if isinstance(value, list):
                out.append(f"<{tag}>{render(value)}</{tag}>")
            else:
                attr = f' junos:celsius="{celsius[0]}"' if celsius and celsius[0] is not None else ""
                out.append(f"<{tag}{attr}>{value}</{tag}>")
        return "\n".join(out)

    return (
        '<rpc-reply xmlns:junos="http://xml.juniper.net/junos/23.4R1/junos">\n'
        '<interface-information xmlns="http://xml.juniper.net/junos/23.4R1/junos-interface" junos:style="normal">\n'
        f"<physical-interface><name>{port}</name><optics-diagnostics>\n{render(rows)}\n"
        "</optics-diagnostics></physical-interface></interface-information></rpc-reply>"
    ).encode()


def _junos_json(port, rows):
    """The same rows as ``| display json`` writes them: every element an array of objects, a
    repeated element (one lane block per lane) one array of several objects."""

    def item(value, celsius):
        if isinstance(value, list):
            return f"{{{render(value)}}}"
        attr = f', "attributes": {{"junos:celsius": "{celsius[0]}"}}' if celsius and celsius[0] else ""
        return f'{{"data": "{value}"{attr}}}'

    def render(rows):
        arrays: dict[str, list[str]] = {}
        for tag, value, *celsius in rows:
            arrays.setdefault(tag, []).append(item(value, celsius))
        return ", ".join(f'"{tag}": [{", ".join(items)}]' for tag, items in arrays.items())

    return (
        '{"interface-information": [{"attributes": {"junos:style": "normal"}, "physical-interface": [{'
        f'"name": [{{"data": "{port}"}}], "optics-diagnostics": [{{{render(rows)}}}]}}]}}]}}'
    ).encode()


def test_junos_lanes_in_xml_and_json_store_what_the_text_of_the_same_module_stores():
    """et-0/0/0's four lanes as the RPC reply writes them, in XML and in | display json: the
    sample is the text capture's, field for field (bias, Tx and Rx power per lane, the 20
    thresholds, the 20 flags with the lane flags folded); the mW duplicates, the laser
    temperature and its flags and the status alarms are named in ``ignored``."""
    text = (TEST_DATA / "real" / "junos_show_interfaces_diagnostics_optics_et_qsfp28_4lanes.txt").read_bytes()
    [from_text] = adapters.parse("junos", text, ctx("mx-1"))
    rows = _qsfp28_module([_qsfp28_lane(i, lane) for i, lane in enumerate(_QSFP28_LANES)])
    for body in (_junos_xml("et-0/0/0", rows), _junos_json("et-0/0/0", rows)):
        c = ctx("mx-1")
        [s] = adapters.parse("junos", body, c)
        assert s == from_text
        assert (s["tx_power_dbm"], s["rx_power_dbm"]) == ([1.30, 0.96, 1.01, 1.56], [1.03, 0.72, 0.97, 1.36])
        assert s["bias_ma"] == [132.255] * 4 and len(s["module_flags"]) == 20
        ignored = dict(c.report.ignored)
        for per_lane in (
            "laser-output-power",
            "laser-rx-optical-power",
            "laser-temperature",
            "laser-temp-low-warn",
        ):
            assert ignored.pop(per_lane) == 4
        for status in _LANE_FLAGS[-3:]:
            assert ignored.pop(status) == 4
        assert ignored.pop("laser-temperature-high-alarm-threshold") == 1
        assert {k for k in ignored if not k.startswith("laser-temp-")} == {
            f"laser-{q}-power-{lvl}-threshold" for q in ("tx", "rx") for lvl in _LEVELS
        }


def test_junos_lanes_out_of_order_a_gap_and_a_lane_flag_on():
    """Lanes are placed by their lane-index, not their order; a lane not sent is a gap; one
    lane's On makes the module's flag On; JSON reads the same."""
    lanes = [
        _qsfp28_lane(3, _QSFP28_LANES[3]),
        _qsfp28_lane(0, _QSFP28_LANES[0], flags={"laser-rx-power-low-warn": "On"}),
        _qsfp28_lane(1, _QSFP28_LANES[1]),
    ]
    rows = [("module-voltage", "3.3340"), *(("optics-diagnostics-lane-values", lane) for lane in lanes)]
    for body in (_junos_xml("et-0/0/8", rows), _junos_json("et-0/0/8", rows)):
        [s] = adapters.parse("junos", body, ctx("mx-1"))
        assert (s["bias_ma"], s["tx_power_dbm"], s["rx_power_dbm"]) == (
            [132.255, 132.255, None, 132.255],
            [1.30, 0.96, None, 1.56],
            [1.03, 0.72, None, 1.36],
        )
        assert (
            s["module_flags"]["rx_power_low_warn"] is True
            and s["module_flags"]["rx_power_low_alarm"] is False
        )


def test_junos_lane_values_that_are_no_number():
    """Junos' "- Inf" (no light) is a lane without a reading, as the text's "- Inf dBm"; other
    text that is no number leaves the lane without it too, and is named in ``ignored``."""
    dark = [("lane-index", "0"), ("laser-bias-current", "0.000"), ("laser-output-power-dbm", "- Inf")]
    dark += [("laser-rx-optical-power-dbm", "-Inf")]
    odd = [("lane-index", "1"), ("laser-bias-current", "n/a"), ("laser-output-power-dbm", "-2.10")]
    odd += [("laser-rx-optical-power-dbm", "-5.23")]
    rows = [("optics-diagnostics-lane-values", dark), ("optics-diagnostics-lane-values", odd)]
    for body in (_junos_xml("et-0/0/9", rows), _junos_json("et-0/0/9", rows)):
        c = ctx("mx-1")
        [s] = adapters.parse("junos", body, c)
        assert (s["bias_ma"], s["tx_power_dbm"], s["rx_power_dbm"]) == (
            [0.0, None],
            [None, -2.1],
            [None, -5.23],
        )
        assert dict(c.report.ignored) == {"laser-bias-current": 1}


def test_junos_lane_blocks_that_say_too_little_or_too_much_are_refused():
    """A lane block with readings but no lane number (or one that is no number, or past the 16
    lanes a module has), a lane sent twice, a reading named twice in one lane: 400, naming it."""
    one = [("lane-index", "0"), ("laser-rx-optical-power-dbm", "-1.00")]
    cases = {
        r"^Junos optics-diagnostics-lane-values of et-0/0/1 with no lane-index: each lane needs its number\.$": [
            [("laser-rx-optical-power-dbm", "-1.00")]
        ],
        r"^Junos optics-diagnostics-lane-values of et-0/0/1 with lane-index 'x': each lane needs its number\.$": [
            [("lane-index", "x"), ("laser-rx-optical-power-dbm", "-1.00")]
        ],
        r"^Junos lane-index 16 of et-0/0/1: a module has at most 16 lanes\.$": [[("lane-index", "16")]],
        r"^Junos output names lane 0 of et-0/0/1 twice: send it once\.$": [one, one],
        r"^Junos output names laser-rx-optical-power-dbm twice in one optics-diagnostics-lane-values: send it once\.$": [
            [*one, ("laser-rx-optical-power-dbm", "-1.00")]
        ],
    }
    for message, lanes in cases.items():
        rows = [("optics-diagnostics-lane-values", lane) for lane in lanes]
        for body in (_junos_xml("et-0/0/1", rows), _junos_json("et-0/0/1", rows)):
            with pytest.raises(adapters.AdapterError, match=message):
                adapters.parse("junos", body, ctx("mx-1"))


def test_junos_a_module_reading_named_twice_is_refused():
    """The module's temperature or supply voltage sent twice in one optics-diagnostics says two
    things about one module: 400, naming it, as a lane or a lane reading sent twice is. Before,
    the second value replaced the first in silence."""
    for tag in ("module-temperature", "module-voltage"):
        rows = [(tag, "40.5"), ("laser-output-power-dbm", "-1.00"), (tag, "41.0")]
        for body in (_junos_xml("et-0/0/3", rows), _junos_json("et-0/0/3", rows)):
            with pytest.raises(
                adapters.AdapterError,
                match=rf"^Junos output names {tag} twice in one optics-diagnostics of et-0/0/3: send it once\.$",
            ):
                adapters.parse("junos", body, ctx("mx-1"))
        [s] = adapters.parse("junos", _junos_xml("et-0/0/3", rows[:2]), ctx("mx-1"))
        assert s["temperature_c" if tag == "module-temperature" else "voltage_v"] == 40.5


def test_junos_lanes_win_over_a_module_level_reading_of_the_same_quantity():
    """A module writing both a module-level Tx power and lanes: the lanes are stored, the
    module-level element is named; a module-level reading the lanes lack is kept."""
    lane = [("lane-index", "0"), ("laser-output-power-dbm", "-1.50")]
    rows = [
        ("laser-output-power-dbm", "-1.00"),
        ("rx-signal-avg-optical-power-dbm", "-3.00"),
        ("optics-diagnostics-lane-values", lane),
    ]
    c = ctx("mx-1")
    [s] = adapters.parse("junos", _junos_xml("et-0/0/2", rows), c)
    assert (s["tx_power_dbm"], s["rx_power_dbm"]) == ([-1.5], [-3.0])
    assert dict(c.report.ignored) == {"laser-output-power-dbm": 1}


def test_junos_json_lane_blocks_as_a_repeated_key_read_as_an_array_does():
    body = b"""{"interface-information": [{"physical-interface": [{"name": [{"data": "et-0/0/3"}],
      "optics-diagnostics": [{
        "optics-diagnostics-lane-values": [{"lane-index": [{"data": "1"}],
                                            "laser-rx-optical-power-dbm": [{"data": "-2.28"}]}],
        "optics-diagnostics-lane-values": [{"lane-index": [{"data": "0"}],
                                            "laser-rx-optical-power-dbm": [{"data": "-2.26"}]}]}]}]}]}"""
    [s] = adapters.parse("junos", body, ctx("qfx-1"))
    assert s["rx_power_dbm"] == [-2.26, -2.28]


def test_junos_text_lane_past_what_a_module_has_is_refused():
    """A ``Lane N`` number was taken as it came: ``Lane 1000000000`` built a list of a billion
    empty lanes before the sample's 16-lane bound could refuse it. Lane 16 is refused now, as in
    the XML; lane 15 is the last a module has."""
    body = b"Physical interface: et-0/0/4\n  Lane 16\n    Laser bias current : 7.000 mA\n"
    with pytest.raises(
        adapters.AdapterError, match=r"^Junos Lane 16 of et-0/0/4: a module has at most 16 lanes\.$"
    ):
        adapters.parse("junos", body, ctx("mx-1"))
    [s] = adapters.parse("junos", body.replace(b"Lane 16", b"Lane 15"), ctx("mx-1"))
    assert s["bias_ma"] == [None] * 15 + [7.0]


def test_a_lane_number_past_what_a_module_has_is_that_item_s_error_in_every_adapter():
    """``(Channel 1000000000)`` / ``RX99999999Power`` / ``channel[index=...]`` built a list of that
    many empty lanes (gigabytes) before the sample's 16-lane bound could refuse it; the list now
    stops one lane past the bound, and the item is refused for it."""
    huge = "1000000000"
    bodies = {
        "ethtool-module": f"\tRcvr signal avg optical power (Channel {huge}) : 0.5000 mW / -3.01 dBm\n",
        "sonic-dom": f"Ethernet0: SFP EEPROM detected\n    ChannelMonitorValues:\n        RX{huge}Power: -3.01dBm\n",
        "gnmi": '{"update": [{"path": "/components/component[name=Ethernet0 Transceiver]/transceiver/'
        f'physical-channels/channel[index={huge}]/state/input-power/instant", "val": "-3.01"}}]}}',
    }
    for fmt, body in bodies.items():
        [s] = adapters.parse(fmt, body.encode(), ctx("leaf-1", "Ethernet0"))
        assert s["rx_power_dbm"] == [None] * 17, fmt
        out = decode_objects([{**s, "ts": s["ts"].timestamp()}], now=NOW, max_future=timedelta(0))
        assert out.samples == [] and [(e.code, e.port) for e in out.errors] == [("invalid", "Ethernet0")], fmt


# --- SONiC transceiver DOM (show interfaces transceiver eeprom --dom, STATE_DB hashes) ------------

SONIC_QSFP28_AOC = {
    "device": "leaf-1",
    "port": "Ethernet0",
    "ts": NOW,
    "temperature_c": 30.9258,
    "voltage_v": 3.2824,
    "rx_power_dbm": [0.3802, -0.4871, -0.086, 0.383],
    "bias_ma": [6.75, 6.75, 6.75, 6.75],
    "module_vendor": "Mellanox",
    "module_part": "MFA1A00-C003",
    "module_serial": "MT1706FT02064",
    "module_thresholds": {
        "rx_power_high_alarm": 3.4001,
        "rx_power_high_warn": 2.4,
        "rx_power_low_alarm": -13.5067,
        "rx_power_low_warn": -9.5001,
        "bias_high_alarm": 10.0,
        "bias_high_warn": 9.5,
        "bias_low_alarm": 0.5,
        "bias_low_warn": 1.0,
        "temperature_high_alarm": 75.0,
        "temperature_high_warn": 70.0,
        "temperature_low_alarm": -5.0,
        "temperature_low_warn": 0.0,
        "voltage_high_alarm": 3.63,
        "voltage_high_warn": 3.465,
        "voltage_low_alarm": 2.97,
        "voltage_low_warn": 3.1349,
    },
    "rx_power_low_warn_dbm": -9.5001,
    "rx_power_low_alarm_dbm": -13.5067,
    "temperature_high_warn_c": 70.0,
}


def test_sonic_dom_cli_of_a_real_qsfp28_every_reading_and_threshold():
    """sfpshow's output of a QSFP28 AOC: four lanes, the module readings in C and Volts, 16
    thresholds, the identity; every other line with a value is named (a heading is no line)."""
    body = (TEST_DATA / "real" / "sonic_eeprom_dom_qsfp28_aoc_Ethernet0.txt").read_bytes()
    c = ctx("leaf-1")
    assert adapters.parse("sonic-dom", body, c) == [SONIC_QSFP28_AOC]
    assert dict(c.report.ignored) == dict.fromkeys(
        (
            "Application Advertisement",
            "Connector",
            "Encoding",
            "Extended Identifier",
            "Extended RateSelect Compliance",
            "Identifier",
            "Length Cable Assembly(m)",
            "Nominal Bit Rate(100Mbs)",
            "10/40G Ethernet Compliance Code",
            "Vendor Date Code(YYYY-MM-DD Lot)",
            "Vendor OUI",
            "Vendor Rev",
        ),
        1,
    )


def test_sonic_dom_state_db_of_the_same_module_gives_the_same_sample():
    """STATE_DB's TRANSCEIVER_INFO / _DOM_SENSOR / _DOM_THRESHOLD hashes of that module: the same
    sample from xcvrd's names; tx<n>power N/A is no lane and not ignored."""
    body = (TEST_DATA / "real" / "sonic_state_db_transceiver_Ethernet0.json").read_bytes()
    c = ctx("leaf-1")
    assert adapters.parse("sonic-dom", body, c) == [SONIC_QSFP28_AOC]
    assert dict(c.report.ignored) == dict.fromkeys(
        (
            "type",
            "vendor_rev",
            "vendor_oui",
            "vendor_date",
            "connector",
            "encoding",
            "ext_identifier",
            "ext_rateselect_compliance",
            "cable_type",
            "cable_length",
            "specification_compliance",
            "nominal_bit_rate",
            "application_advertisement",
        ),
        1,
    )


def test_sonic_dom_cli_ports_lanes_and_values_it_cannot_read():
    """Two modules and an empty cage (either spelling): a lane printed out of order keeps its
    place, a missing lane is None, a lane of N/A only is no field, a reading in exponent form is
    read; N/A identity is no field; an RX bias is no reading and is named; a line before the
    first port, a line without a colon and a key without a value are skipped."""
    body = b"""show interfaces transceiver eeprom --dom: something
Ethernet0: SFP EEPROM detected
        Vendor Name: N/A
        Vendor SN: n/a
        Vendor PN: QSFP-X
        a line without a separator
        Empty:
        RX3Power: -1.5e-1dBm
        RX1Power: 2dBm
        TX1Power: N/A
        TX2Power: N/A
        TX1Bias: 7.25mA
        RX1Bias: 1.0mA
        Vcc: N/A
        Temperature: -3.5C
        Rx Power Low Warning : -10.5dBm
        TempHighAlarm: N/A
Ethernet4: SFP EEPROM Not detected
Ethernet8: SFP EEPROM not detected
Ethernet12: SFP EEPROM detected
        Vendor Name:   Acme
        Vcc: 3.3Volts
"""
    c = ctx("leaf-1")
    assert adapters.parse("sonic-dom", body, c) == [
        {
            "device": "leaf-1",
            "port": "Ethernet0",
            "ts": NOW,
            "module_part": "QSFP-X",
            "rx_power_dbm": [2.0, None, -0.15],
            "bias_ma": [7.25],
            "temperature_c": -3.5,
            "module_thresholds": {"rx_power_low_warn": -10.5},
            "rx_power_low_warn_dbm": -10.5,
        },
        {"device": "leaf-1", "port": "Ethernet12", "ts": NOW, "module_vendor": "Acme", "voltage_v": 3.3},
    ]
    assert dict(c.report.ignored) == {
        "RX1Bias": 1,
        "Ethernet4: SFP EEPROM not detected": 1,
        "Ethernet8: SFP EEPROM not detected": 1,
    }
    message = r"^No '<port>: SFP EEPROM detected' block in the output of show interfaces transceiver eeprom --dom\.$"
    with pytest.raises(adapters.AdapterError, match=message):
        adapters.parse("sonic-dom", b"Ethernet4: SFP EEPROM not detected\n", ctx("leaf-1"))
    with pytest.raises(adapters.AdapterError, match=message):
        adapters.parse("sonic-dom", b"        RX1Power: 2dBm\n", ctx("leaf-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^sonic-dom output does not name the device: pass \?device="
    ):
        adapters.parse("sonic-dom", body, ctx())


def test_sonic_dom_cli_value_holding_a_colon_stays_whole():
    """The EEPROM's vendor strings are free ASCII: a serial holding a colon is read whole, under
    its own label, and nothing is named as unread."""
    body = b"Ethernet0: SFP EEPROM detected\n        Vendor SN: MT17:06FT\n        Vendor Name: Acme:Optics\n"
    c = ctx("leaf-1")
    assert adapters.parse("sonic-dom", body, c) == [
        {
            "device": "leaf-1",
            "port": "Ethernet0",
            "ts": NOW,
            "module_serial": "MT17:06FT",
            "module_vendor": "Acme:Optics",
        }
    ]
    assert dict(c.report.ignored) == {}


def test_sonic_dom_state_db_one_hash_new_names_and_json_numbers():
    """A bare TRANSCEIVER_DOM_SENSOR hash is the ?port='s; xcvrd's newer TRANSCEIVER_INFO names
    (manufacturename, modelname, serialnum) and JSON numbers are read, a JSON true is no number;
    another table or a key without a port is named; ports keep the body's order."""
    body = b"""  {"temperature": 41, "vcc": 3.25, "rx2power": "-2.0", "rx1power": true, "tx1bias": 6,
      "TRANSCEIVER_INFO|Ethernet0": {"manufacturename": " Acme ", "modelname": "Q-1", "serialnum": 77},
      "TRANSCEIVER_DOM_THRESHOLD|Ethernet0": {"rxpowerlowalarm": "N/A", "txbiashighwarning": "9"},
      "PORT_TABLE|Ethernet0": {"speed": "100000"},
      "TRANSCEIVER_DOM_SENSOR|": {"temperature": "1"},
      "TRANSCEIVER_DOM_SENSOR|Ethernet4": {"voltage": "3.3", "rx1power": "N/A", "tx1power": "-1.0"}}"""
    c = ctx("leaf-1", "Ethernet0")
    assert adapters.parse("sonic-dom", body, c) == [
        {
            "device": "leaf-1",
            "port": "Ethernet0",
            "ts": NOW,
            "temperature_c": 41.0,
            "voltage_v": 3.25,
            "rx_power_dbm": [None, -2.0],
            "bias_ma": [6.0],
            "module_vendor": "Acme",
            "module_part": "Q-1",
            "module_serial": "77",
            "module_thresholds": {"bias_high_warn": 9.0},
        },
        {"device": "leaf-1", "port": "Ethernet4", "ts": NOW, "voltage_v": 3.3, "tx_power_dbm": [-1.0]},
    ]
    assert dict(c.report.ignored) == {"PORT_TABLE|Ethernet0": 1, "TRANSCEIVER_DOM_SENSOR|": 1}


def test_sonic_dom_state_db_bodies_it_cannot_read():
    with pytest.raises(
        adapters.AdapterError,
        match=r"^A single TRANSCEIVER_DOM_SENSOR hash does not name the port: pass \?port=\.$",
    ):
        adapters.parse("sonic-dom", b'{"temperature": "30", "rx1power": "1"}', ctx("leaf-1"))
    with pytest.raises(
        adapters.AdapterError,
        match=r"^No TRANSCEIVER_DOM_SENSOR / TRANSCEIVER_DOM_THRESHOLD hash in the STATE_DB JSON\.$",
    ):
        adapters.parse(
            "sonic-dom", b'{"PORT_TABLE|Ethernet0": {"rx1power": "1"}}', ctx("leaf-1", "Ethernet0")
        )
    with pytest.raises(adapters.AdapterError, match=r"^No TRANSCEIVER_DOM_SENSOR"):
        adapters.parse("sonic-dom", b"{}", ctx("leaf-1", "Ethernet0"))


# --- Arista EOS (show interfaces transceiver detail, its | json, show interfaces phy detail | json) ---


def _arista_thresholds(**by_quantity):
    """{"rx_power": (high alarm, high warn, low alarm, low warn), ...} -> module_thresholds."""
    levels = ("high_alarm", "high_warn", "low_alarm", "low_warn")
    return {
        f"{q}_{level}": v
        for q, values in by_quantity.items()
        for level, v in zip(levels, values, strict=True)
    }


def test_arista_text_of_a_real_switch_one_sample_per_port_with_the_thresholds_of_its_quantities():
    """EOS's five tables (temperature, voltage, current, tx and rx power): a port gets each
    quantity its rows give, one lane of each per-lane quantity, and the four thresholds of each;
    ``Et`` is spelt ``Ethernet``; ports in the order first seen."""
    body = (TEST_DATA / "real" / "arista_eos_show_interfaces_transceiver_detail.txt").read_bytes()
    c = ctx("eos-1")
    out = adapters.parse("arista-eos", body, c)
    assert [s["port"] for s in out] == [
        "Ethernet6/1",
        "Ethernet6/2",
        "Ethernet6/3",
        "Ethernet6/4",
        "Ethernet29/1",
        "Ethernet29/2",
        "Ethernet29/3",
        "Ethernet29/4",
        "Ethernet7/1",
    ]
    assert out[0] == {
        "device": "eos-1",
        "port": "Ethernet6/1",
        "ts": NOW,
        "temperature_c": 27.48,
        "voltage_v": 3.3,
        "tx_power_dbm": [-2.39],
        "rx_power_dbm": [-0.9],
        "module_thresholds": _arista_thresholds(
            temperature=(80.0, 75.0, -5.0, 0.0),
            voltage=(3.6, 3.5, 3.0, 3.1),
            tx_power=(4.4, 3.4, -9.6, -8.6),
            rx_power=(4.4, 3.4, -11.5, -10.5),
        ),
        "rx_power_low_warn_dbm": -10.5,
        "rx_power_low_alarm_dbm": -11.5,
        "temperature_high_warn_c": 75.0,
    }
    assert out[4] == {
        "device": "eos-1",
        "port": "Ethernet29/1",
        "ts": NOW,
        "bias_ma": [21.9],
        "module_thresholds": _arista_thresholds(bias=(38.3, 37.35, 0.0, 0.0)),
    }
    assert out[8] == {
        "device": "eos-1",
        "port": "Ethernet7/1",
        "ts": NOW,
        "rx_power_dbm": [-1.15],
        "module_thresholds": _arista_thresholds(rx_power=(4.4, 3.4, -11.5, -10.5)),
        "rx_power_low_warn_dbm": -10.5,
        "rx_power_low_alarm_dbm": -11.5,
    }
    assert not c.report.ignored
    with pytest.raises(
        adapters.AdapterError, match=r"^arista-eos output does not name the device: pass \?device="
    ):
        adapters.parse("arista-eos", body, ctx())


def test_arista_text_a_table_of_a_quantity_it_does_not_store_is_named_and_the_next_read():
    """A table the template reads but cabletrack stores no field for (here ``Laser Temp``) is
    named once per row in ``ignored``; the tables after it are still read."""
    table = (
        "                         High Alarm  High Warn   Low Alarm   Low Warn    \n"
        "           {quantity:<14}Threshold   Threshold   Threshold   Threshold   \n"
        "Port       (Celsius)     (Celsius)   (Celsius)   (Celsius)   (Celsius)   \n"
        "-------    ------------  ----------  ----------  ----------  ----------  \n"
        "Et6/1      {value:<14}80.00       75.00       -5.00       0.00        \n"
    )
    body = (
        "mA: milliamperes, dBm: decibels (milliwatts), NA or N/A: not applicable.\n"
        + table.format(quantity="Laser Temp", value="40.00")
        + table.format(quantity="Temperature", value="27.48")
    )
    c = ctx("eos-1")
    assert adapters.parse("arista-eos", body.encode(), c) == [
        {
            "device": "eos-1",
            "port": "Ethernet6/1",
            "ts": NOW,
            "temperature_c": 27.48,
            "module_thresholds": _arista_thresholds(temperature=(80.0, 75.0, -5.0, 0.0)),
            "temperature_high_warn_c": 75.0,
        }
    ]
    assert dict(c.report.ignored) == {"Laser Temp": 1}


def test_arista_text_without_port_rows_or_with_an_unknown_line():
    head = b"mA: milliamperes, dBm: decibels (milliwatts), NA or N/A: not applicable.\n"
    with pytest.raises(
        adapters.AdapterError,
        match=r"^No port rows in the Arista EOS show interfaces transceiver detail output\.$",
    ):
        adapters.parse("arista-eos", head, ctx("eos-1"))
    with pytest.raises(
        adapters.AdapterError,
        match=r"^Not Arista EOS show interfaces transceiver detail output: .*what is this",
    ):
        adapters.parse("arista-eos", head + b"what is this\n", ctx("eos-1"))


def test_arista_json_readings_serial_thresholds_and_what_is_named():
    """``| json``: a port's readings (one lane each), its serial stripped, the module's own
    thresholds; an overridden threshold, an ``...Overridden`` flag, a quantity or level it does
    not know, a limit that is no number and a block that is no object are named; so are the
    top-level and per-port keys it does not read. ``Et`` ports are spelt ``Ethernet``. The body
    may start with blank lines."""
    body = b"""
    {"interfaces": {
      "Et1": {"temperature": 35.5, "voltage": "3.25", "txBias": 6.5, "txPower": -1.5, "rxPower": null,
              "vendorSn": " XMD1 ", "mediaType": "40GBASE-SR4",
              "details": {"voltage": 3.3,
                          "txBias": {"highAlarm": 15.0, "highAlarmOverridden": false,
                                     "lowWarn": 2.0, "lowWarnOverridden": true},
                          "rxPower": {"lowAlarm": -18.0, "lowWarn": -15.0, "highWarn": "N/A", "low": 1.0},
                          "temperature": {"highWarn": 70.0},
                          "totalRxPower": {"highAlarm": 1.0}}},
      "Ethernet2": {"vendorSn": "   ", "details": {}},
      "Ethernet3": {"vendorSn": 7, "txPower": "x"}},
      "timestamp": 1}"""
    c = ctx("eos-1")
    assert adapters.parse("arista-eos", body, c) == [
        {
            "device": "eos-1",
            "port": "Ethernet1",
            "ts": NOW,
            "temperature_c": 35.5,
            "voltage_v": 3.25,
            "bias_ma": [6.5],
            "tx_power_dbm": [-1.5],
            "module_serial": "XMD1",
            "module_thresholds": {
                "bias_high_alarm": 15.0,
                "rx_power_low_alarm": -18.0,
                "rx_power_low_warn": -15.0,
                "temperature_high_warn": 70.0,
            },
            "rx_power_low_warn_dbm": -15.0,
            "rx_power_low_alarm_dbm": -18.0,
            "temperature_high_warn_c": 70.0,
        },
        {"device": "eos-1", "port": "Ethernet2", "ts": NOW},
        {"device": "eos-1", "port": "Ethernet3", "ts": NOW},
    ]
    assert dict(c.report.ignored) == {
        "timestamp": 1,
        "mediaType": 1,
        "details.txBias.highAlarmOverridden": 1,
        "details.txBias.lowWarn": 1,
        "details.txBias.lowWarnOverridden": 1,
        "details.rxPower.highWarn": 1,
        "details.rxPower.low": 1,
        "details.totalRxPower.highAlarm": 1,
        "details.voltage": 1,
    }


def test_arista_json_bodies_it_cannot_read():
    no_ports = (
        r'^Not Arista EOS show interfaces transceiver \| json output: no "interfaces" object of ports\.$'
    )
    for body in (b'{"interfaces": {}}', b'{"interfaces": []}', b'{"x": 1}'):
        with pytest.raises(adapters.AdapterError, match=no_ports):
            adapters.parse("arista-eos", body, ctx("eos-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^Arista EOS JSON: port 'Et1' is not an object of readings\.$"
    ):
        adapters.parse("arista-eos", b'{"interfaces": {"Et1": 5}}', ctx("eos-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^Arista EOS JSON: details is not an object of thresholds\.$"
    ):
        adapters.parse("arista-eos", b'{"interfaces": {"Et1": {"details": []}}}', ctx("eos-1"))


def _phy(port_values: dict) -> bytes:
    return json.dumps({"interfacePhyStatuses": port_values}).encode()


def _attr(value):
    return {"value": value, "changes": 1, "lastChange": 0.0}


def test_arista_phy_json_the_line_side_phy_its_fec_counters_and_speed():
    """The only PHY, or the one on the line side of two: RS-FEC corrected and uncorrected
    codewords, the lanes' corrected symbols summed, the trained speed; the companions of each
    counter, the system-side PHY, the PHY's and the port's other blocks are named."""
    body = _phy(
        {
            "Et1/1": {
                "phyStatuses": [
                    {
                        "description": {"location": "line"},
                        "fec": {
                            "correctedCodewords": _attr(5),
                            "uncorrectedCodewords": _attr(3),
                            "correctedSymbols": {"0": _attr(4), "1": _attr(6)},
                            "encoding": "reedSolomon",
                        },
                        "operSpeed": "100Gbps",
                    },
                    {"description": {"location": "system"}, "fec": {"correctedCodewords": _attr(99)}},
                ],
                "macFaults": {},
            },
            "Ethernet2": {"phyStatuses": [{"operSpeed": "25.5Gbps", "fec": {"correctedSymbols": {}}}]},
            "Ethernet3": {"phyStatuses": [{"operSpeed": "unknown"}]},
            "Ethernet4": {"phyStatuses": []},
        }
    )
    c = ctx("eos-1")
    assert adapters.parse("arista-eos", body, c) == [
        {
            "device": "eos-1",
            "port": "Ethernet1/1",
            "ts": NOW,
            "fec_corrected_codewords": 5,
            "fec_uncorrectable_codewords": 3,
            "fec_symbol_errors": 10,
            "speed_gbps": 100.0,
        },
        {"device": "eos-1", "port": "Ethernet2", "ts": NOW, "speed_gbps": 25.5},
        {"device": "eos-1", "port": "Ethernet3", "ts": NOW},
        {"device": "eos-1", "port": "Ethernet4", "ts": NOW},
    ]
    assert dict(c.report.ignored) == {
        "fec.correctedCodewords.changes": 1,
        "fec.correctedCodewords.lastChange": 1,
        "fec.uncorrectedCodewords.changes": 1,
        "fec.uncorrectedCodewords.lastChange": 1,
        "fec.correctedSymbols.changes": 2,
        "fec.correctedSymbols.lastChange": 2,
        "fec.encoding": 1,
        "description": 1,
        "phyStatuses (not the line side)": 1,
        "macFaults": 1,
        "operSpeed": 1,
    }


def test_arista_phy_json_of_a_real_switch():
    body = (TEST_DATA / "real" / "arista_eos_show_interfaces_phy_detail_7050cx3_eos4.35.json").read_bytes()
    out = adapters.parse("arista-eos", body, ctx("eos-1"))
    assert out == [
        {"device": "eos-1", "port": "Ethernet1/1", "ts": NOW, "speed_gbps": 10.0},
        {
            "device": "eos-1",
            "port": "Ethernet4/1",
            "ts": NOW,
            "fec_corrected_codewords": 5,
            "fec_uncorrectable_codewords": 3,
            "speed_gbps": 25.0,
        },
        {
            "device": "eos-1",
            "port": "Ethernet29/1",
            "ts": NOW,
            "fec_corrected_codewords": 0,
            "fec_uncorrectable_codewords": 0,
            "fec_symbol_errors": 0,
            "speed_gbps": 100.0,
        },
    ]


@pytest.mark.parametrize(
    ("ports", "message"),
    [
        ({}, r'^Arista EOS phy JSON: "interfacePhyStatuses" holds no port\.$'),
        ({"Et1": []}, r"^Arista EOS phy JSON: port 'Et1' is not an object\.$"),
        ({"Et1": {"phyStatuses": {}}}, r"^Arista EOS phy JSON: Et1 phyStatuses is not a list\.$"),
        ({"Et1": {}}, r"^Arista EOS phy JSON: Et1 phyStatuses is not a list\.$"),
        ({"Et1": {"phyStatuses": [5]}}, r"^Arista EOS phy JSON: Et1 phyStatuses holds a non-object\.$"),
        (
            {
                "Et1": {
                    "phyStatuses": [
                        {"description": {"location": "line"}},
                        {"description": {"location": "line"}},
                    ]
                }
            },
            r"^Arista EOS phy JSON: Et1 has 2 PHYs and not one on the line side\.$",
        ),
        (
            {"Et1": {"phyStatuses": [{"description": {"location": "system"}}, 7, {}]}},
            r"^Arista EOS phy JSON: Et1 has 3 PHYs and not one on the line side\.$",
        ),
        ({"Et1": {"phyStatuses": [{"fec": []}]}}, r"^Arista EOS phy JSON: Et1 fec is not an object\.$"),
        (
            {"Et1": {"phyStatuses": [{"fec": {"correctedCodewords": 5}}]}},
            r"^Arista EOS phy JSON: fec\.correctedCodewords has no value\.$",
        ),
        (
            {"Et1": {"phyStatuses": [{"fec": {"uncorrectedCodewords": {"changes": 1}}}]}},
            r"^Arista EOS phy JSON: fec\.uncorrectedCodewords has no value\.$",
        ),
        (
            {"Et1": {"phyStatuses": [{"fec": {"correctedCodewords": {"value": -1}}}]}},
            r"^Arista EOS phy JSON: fec\.correctedCodewords is not a count: -1\.$",
        ),
        (
            {"Et1": {"phyStatuses": [{"fec": {"correctedCodewords": {"value": True}}}]}},
            r"^Arista EOS phy JSON: fec\.correctedCodewords is not a count: True\.$",
        ),
        (
            {"Et1": {"phyStatuses": [{"fec": {"correctedSymbols": {"0": {"value": "x"}}}}]}},
            r"^Arista EOS phy JSON: fec\.correctedSymbols is not a count: 'x'\.$",
        ),
    ],
)
def test_arista_phy_json_bodies_it_cannot_read(ports, message):
    with pytest.raises(adapters.AdapterError, match=message):
        adapters.parse("arista-eos", _phy(ports), ctx("eos-1"))


def test_arista_phy_json_a_zero_count_is_kept():
    [s] = adapters.parse(
        "arista-eos",
        _phy({"Et1": {"phyStatuses": [{"fec": {"correctedCodewords": {"value": 0}}}]}}),
        ctx("eos-1"),
    )
    assert s == {"device": "eos-1", "port": "Ethernet1", "ts": NOW, "fec_corrected_codewords": 0}


def test_gnmi_transceiver_module_readings_and_fec_codeword_leaves():
    """A transceiver's module readings (temperature, supply voltage, post-FEC BER, instant only)
    keep their fractions; ``floatVal``, ``jsonIetfVal`` and a decimal64 without a precision are
    read; the FEC codeword leaves OpenConfig spells ``-codewords`` are read; a leaf one or two
    names long is read with ?port=; an update without a path is named as the empty name; the switch's own LLDP name and a line card's serial are not
    a neighbour or a module."""
    body = b"""{"update": [
      {"path": "/components/component[name=Ethernet1 transceiver]/state/temperature/instant",
       "val": {"floatVal": 41.5}},
      {"path": "/components/component[name=Ethernet1 transceiver]/state/supply-voltage/instant",
       "val": {"jsonIetfVal": "3.25"}},
      {"path": "/components/component[name=Ethernet1 transceiver]/state/post-fec-ber/instant",
       "val": {"doubleVal": 2.5e-12}},
      {"path": "/interfaces/interface[name=Ethernet1]/state/fec-corrected-codewords", "val": 11},
      {"path": "/interfaces/interface[name=Ethernet1]/state/fec-uncorrectable-codewords", "val": 2},
      {"path": "/components/component[name=Linecard1]/state/serial-no", "val": "LC-1"},
      {"path": "/lldp/state/system-name", "val": "leaf-1"},
      {"path": "temperature/instant", "val": {"decimalVal": {"digits": "30"}}},
      {"val": 5},
      {"path": "/fec-corrected-bits", "val": 5}
    ]}"""
    c = ctx("leaf-1", "Ethernet9")
    assert adapters.parse("gnmi", body, c) == [
        {
            "device": "leaf-1",
            "port": "Ethernet1",
            "ts": NOW,
            "temperature_c": 41.5,
            "voltage_v": 3.25,
            "post_fec_ber": 2.5e-12,
            "fec_corrected_codewords": 11,
            "fec_uncorrectable_codewords": 2,
        },
        {"device": "leaf-1", "port": "Ethernet9", "ts": NOW, "temperature_c": 30.0, "fec_corrected_bits": 5},
    ]
    assert dict(c.report.ignored) == {
        "components/component/state/serial-no": 1,
        "lldp/state/system-name": 1,
        "": 1,  # an update without a path
    }


def test_gnmi_path_spellings_lists_and_gnmic_updates():
    """``elems`` for ``elem``, an element without a name, an update path with no elements under
    a prefix, a list value without a path, an element with two keys and a module prefix on a
    keyed element; gnmic's ``updates`` with ``path`` in lower case, or none (the value's key is
    the keyed path); SONiC's FEC_POST_BER."""
    body = b"""[{"notification": {"prefix": {"elem": [{"name": "interfaces"},
                                                {"name": "interface", "key": {"name": "Ethernet2"}}]},
      "update": [
        {"path": {"elems": [{"name": "state"}, {"name": "fec-symbol-errors"}]}, "val": 3},
        {"path": {"elem": [{"name": "state"}, {"key": {"a": "b"}}, {"name": "oper-status"}]}, "val": "UP"}
      ]}},
     {"notification": {"prefix": {"elem": [{"name": "interfaces"},
                                           {"name": "interface", "key": {"name": "Ethernet3"}},
                                           {"name": "state"}, {"name": "fec-corrected-bits"}]},
      "update": [{"path": {"elem": []}, "val": 8}]}},
     {"update": [{"val": {"jsonVal": [{"COUNTERS": {"Ethernet4": {"FEC_POST_BER": "1e-12"}}}]}},
                 {"path": "/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/state/as",
                  "val": 1},
                 {"path": "/openconfig-interfaces:interface[name=Ethernet5]/state/in-mac-pause-frames", "val": 4}]},
     {"updates": [{"path": "/interfaces/interface[name=Ethernet6]/state/counters",
                   "values": {"interfaces/interface/state/counters": {"out-mac-pause-frames": 6}}},
                  {"values": {"interfaces/interface[name=Ethernet7]/state/counters/in-mac-pause-frames": 9}}]}]"""
    c = ctx("leaf-1")
    assert adapters.parse("gnmi", body, c) == [
        {"device": "leaf-1", "port": "Ethernet2", "ts": NOW, "fec_symbol_errors": 3},
        {"device": "leaf-1", "port": "Ethernet3", "ts": NOW, "fec_corrected_bits": 8},
        {"device": "leaf-1", "port": "Ethernet4", "ts": NOW, "post_fec_ber": 1e-12},
        {"device": "leaf-1", "port": "Ethernet5", "ts": NOW, "pfc_pause_rx": 4},
        {"device": "leaf-1", "port": "Ethernet6", "ts": NOW, "pfc_pause_tx": 6},
        {"device": "leaf-1", "port": "Ethernet7", "ts": NOW, "pfc_pause_rx": 9},
    ]
    assert dict(c.report.ignored) == {
        "interfaces/interface/state//oper-status": 1,
        "network-instances/network-instance/protocols/protocol/state/as": 1,
    }


def test_gnmi_a_values_key_with_a_path_inside_a_json_value():
    """A JSON value whose key is a path (``ethernet/state/counters/...``) is read as that path."""
    body = b"""/interfaces/interface[name=Ethernet1]:
{"ethernet/state/counters/in-mac-pause-frames": 7}
"""
    [s] = adapters.parse("gnmi", body, ctx("leaf-1"))
    assert s == {"device": "leaf-1", "port": "Ethernet1", "ts": NOW, "pfc_pause_rx": 7}


def test_goarista_a_list_of_interfaces_keeps_the_path_above_it():
    """``gnmi get /interfaces``: the interface list's items are keyed by their name; the leaves it
    does not read are named under the whole path."""
    body = b"""/interfaces:
{"openconfig-interfaces:interface": [
  {"name": "Ethernet1", "state": {"oper-status": "UP", "counters": {"in-mac-pause-frames": 3}}}]}
"""
    c = ctx("leaf-1")
    assert adapters.parse("gnmi", body, c) == [
        {"device": "leaf-1", "port": "Ethernet1", "ts": NOW, "pfc_pause_rx": 3}
    ]
    assert dict(c.report.ignored) == {
        "interfaces/interface/name": 1,
        "interfaces/interface/state/oper-status": 1,
    }


def test_goarista_scalars_and_values_that_are_not_json():
    """A scalar that is no JSON (a serial) is kept as printed; a body may start with blank lines;
    a value over two lines or one opening ``{`` or ``[`` that is no JSON is refused naming the
    path; a value before any path is quoted to 80 characters."""
    body = b"""
/components/component[name=Ethernet1 transceiver]/transceiver/state/serial-no: XYZ-1
"""
    [s] = adapters.parse("gnmi", body, ctx("leaf-1"))
    assert s == {"device": "leaf-1", "port": "Ethernet1", "ts": NOW, "module_serial": "XYZ-1"}
    path = "/interfaces/interface[name=Ethernet1]/state/counters/in-mac-pause-frames"
    for value in (b":\nhello\nworld\n", b": {not json\n", b": [1,\n"):
        with pytest.raises(
            adapters.AdapterError,
            match=rf"^gnmi get output: the value of {re.escape(path)} is not valid JSON\.$",
        ):
            adapters.parse("gnmi", path.encode() + value, ctx("leaf-1"))
    line = "/usr/bin/gnmi " + "x" * 100  # no colon: no path
    with pytest.raises(
        adapters.AdapterError,
        match=rf"^gnmi get output: a value before any path: '/usr/bin/gnmi {'x' * 66}'$",
    ):
        adapters.parse("gnmi", (line + "\n" + path + ": 1\n").encode(), ctx("leaf-1"))


# --- NVIDIA mlxlink (text and --json) -------------------------------------------------------------


def _mlxlink(body: bytes, c=None):
    c = c or ctx("hca-1", "mlx5_0")
    return adapters.parse("mlxlink", body, c), c


def test_mlxlink_text_module_info_every_field_and_the_ranges_named():
    """``mlxlink -m``: the module's readings without their ``[low..high]`` range (voltage mV ->
    V), the four lanes of bias and power, the identity; each range and the identifier named."""
    body = next((TEST_DATA / "telemetry").glob("08_*")).read_bytes()
    out, c = _mlxlink(body)
    assert out == [
        {
            "device": "hca-1",
            "port": "mlx5_0",
            "ts": NOW,
            "temperature_c": 54.0,
            "voltage_v": pytest.approx(3.2612),
            "bias_ma": [8.38, 8.38, 8.38, 8.38],
            "rx_power_dbm": [1.886, 1.989, 2.281, 1.976],
            "tx_power_dbm": [1.562, 1.427, 1.559, 1.761],
            "module_vendor": "CLT",
            "module_part": "T-F4GS-BV0",
            "module_serial": "CWJH05025502589",
        }
    ]
    assert dict(c.report.ignored) == {
        "Identifier": 1,
        "Temperature [C] range": 1,
        "Voltage [mV] range": 1,
        "Bias Current [mA] range": 1,
        "Rx Power Current [dBm] range": 1,
        "Tx Power Current [dBm] range": 1,
    }


def test_mlxlink_text_counters_every_field():
    """``mlxlink -c``: the lanes' raw errors summed as corrected bits, both BERs, the link down and
    error recovery counters; the two lines no field takes named."""
    body = next((TEST_DATA / "telemetry").glob("09_*")).read_bytes()
    out, c = _mlxlink(body)
    assert out == [
        {
            "device": "hca-1",
            "port": "mlx5_0",
            "ts": NOW,
            "fec_corrected_bits": 3946476397 + 5120336064 + 7692183445 + 3026261414,
            "pre_fec_ber": 2e-9,
            "post_fec_ber": 15e-255,
            "link_down_events": 0,
            "link_error_recovery": 0,
        }
    ]
    assert dict(c.report.ignored) == {"Time Since Last Clear [Min]": 1, "Effective Physical Errors": 1}


def test_mlxlink_text_histogram_speed_width_and_readings_it_cannot_read():
    """A text histogram in either separator, bins sorted, a range bin; the FEC gives the limit;
    the trained speed and width; N/A identity, a lane error that is no number (no sum), a voltage
    without a number, dashes and a key-less line are no field."""
    body = b"""Operational Info
----------------
Speed                              : 25Gb/s
Width                              : 2X
FEC                                : Standard_RS-FEC - (544,514)
Vendor Name                        : N/A
Vendor Part Number                 :
Voltage [mV]                       : N/A
Raw Physical Errors Per Lane       : 5,N/A
------------------------------     : x
                                   : y
Histogram of FEC Errors
Bin 2 : [2] : 7
Bin 0 | [0] | 100
Bin 1 [1..3] 12
"""
    out, c = _mlxlink(body)
    assert out == [
        {
            "device": "hca-1",
            "port": "mlx5_0",
            "ts": NOW,
            "speed_gbps": 25.0,
            "link_width": 2,
            "fec_hist": [100, 12, 7],
            "fec_hist_bins": [[0, 0], [1, 3], [2, 2]],
            "fec_correction_limit": 15,
        }
    ]
    assert dict(c.report.ignored) == {}


def test_mlxlink_json_sections_histogram_and_lists():
    """``--json``: sections merged (a section that is no object skipped), lane lists as JSON
    lists or ``{"values": [...]}``, a lane list of N/A only is no field; histogram bins read from
    their bracket (a range, or the bin's number when the bracket is missing), a count that is no
    number is 0, a bin not of two values or not named ``Bin N`` skipped; speed ``400G`` and
    width ``4x``; a FEC that is neither 528 nor 544 gives no limit."""
    body = b"""
{"result": {"output": {
  "Tool Information": "x",
  "Module Info": {"Bias Current [mA]": {"values": ["6.5", "N/A"]},
                  "Rx Power Current [dBm]": [1.5, -2.0],
                  "Tx Power Current [dBm]": "N/A,N/A [-8..5]",
                  "Temperature [C]": "41",
                  "Vendor Serial Number": " MT123 "},
  "Operational Info": {"Speed": "400G", "Width": "4x", "FEC": "Firecode"},
  "Physical Counters and BER Info": {"Raw Physical Errors Per Lane": {"values": ["1", "2"]},
                                     "Link Down Counter": "3"},
  "Histogram of FEC Errors": {"Bin 1": {"values": ["[4..7]", "9"]}, "Bin 0": {"values": ["0", "x"]},
                              "Bin 2": {"values": ["[8]"]}, "Header": {"values": ["[9]", "1"]},
                              "Bin 3": "5"}}}}"""
    out, c = _mlxlink(body)
    assert out == [
        {
            "device": "hca-1",
            "port": "mlx5_0",
            "ts": NOW,
            "temperature_c": 41.0,
            "bias_ma": [6.5, None],
            "rx_power_dbm": [1.5, -2.0],
            "module_serial": "MT123",
            "fec_corrected_bits": 3,
            "link_down_events": 3,
            "speed_gbps": 400.0,
            "link_width": 4,
            "fec_hist": [0, 9],
            "fec_hist_bins": [[0, 0], [4, 7]],
        }
    ]
    assert dict(c.report.ignored) == {"Tx Power Current [dBm] range": 1}


def test_mlxlink_bodies_it_cannot_read():
    for body in (b'{"result": {}}', b'{"result": {"output": []}}', b'{"result": null}'):
        with pytest.raises(
            adapters.AdapterError, match=r"^mlxlink --json output: no result\.output object\.$"
        ):
            _mlxlink(body)
    with pytest.raises(
        adapters.AdapterError, match=r"^No module info, counters or histogram found in mlxlink output\.$"
    ):
        _mlxlink(b"Identifier : OSFP\nSpeed : N/A\nWidth : N/A\n")
    with pytest.raises(adapters.AdapterError, match=r"^mlxlink output does not name the port: pass \?port="):
        _mlxlink(b"Temperature [C] : 54\n", ctx("hca-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^mlxlink output does not name the device: pass \?device="
    ):
        _mlxlink(b"Temperature [C] : 54\n", ctx(port="mlx5_0"))


# --- InfiniBand perfquery, Xena PP_RXFECSTATS ------------------------------------------------------


def test_perfquery_blocks_ports_and_what_is_named():
    """One sample per ``# ... port N`` block with its three readings (IB symbol errors apart from
    FEC); PortSelect and CounterSelect are no readings and not named, the other counters are; a
    line of no known shape is named by its first 60 characters; comments (indented too) and blank
    lines are skipped."""
    body = b"""# perfquery -x 1719 1
# Port counters: Lid 1719 port 1 (CapMask: 0x5300)
PortSelect:......................1
CounterSelect:...................0x0000
SymbolErrorCounter:..............7
LinkErrorRecoveryCounter:........2
LinkDownedCounter:...............1
PortRcvErrors:...................4

    # an indented comment
# Port counters: Lid 1719 Port 2 (CapMask: 0x5300)
SymbolErrorCounter:..............0
ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 1719) and then a long tail of words
"""
    c = ctx("hca-1")
    assert adapters.parse("perfquery", body, c) == [
        {
            "device": "hca-1",
            "port": "1",
            "ts": NOW,
            "ib_symbol_errors": 7,
            "link_error_recovery": 2,
            "link_down_events": 1,
        },
        {"device": "hca-1", "port": "2", "ts": NOW, "ib_symbol_errors": 0},
    ]
    assert dict(c.report.ignored) == {
        "PortRcvErrors": 1,
        "ibwarn: [1234] mad_rpc: _do_madrpc failed; dport (Lid 1719) ": 1,
    }
    # ?port= names the one block, or is a template for several; without it, the block's number
    two = adapters.parse("perfquery", body, ctx("hca-1", "mlx5_0"))
    assert [s["port"] for s in two] == ["1", "2"]
    one = body.split(b"# Port counters: Lid 1719 Port 2")[0]
    assert [s["port"] for s in adapters.parse("perfquery", one, ctx("hca-1", "mlx5_0"))] == ["mlx5_0"]
    assert [s["port"] for s in adapters.parse("perfquery", one, ctx("hca-1", "mlx5_0/{port}"))] == [
        "mlx5_0/1"
    ]


def test_perfquery_without_a_header_takes_port_select_or_asks_for_the_port():
    c = ctx("hca-1")
    [s] = adapters.parse("perfquery", b"PortSelect:......3\nLinkDownedCounter:....5\n", c)
    assert s == {"device": "hca-1", "port": "3", "ts": NOW, "link_down_events": 5}
    assert not c.report.ignored
    with pytest.raises(
        adapters.AdapterError, match=r"^perfquery output without a port number: pass \?port=\.$"
    ):
        adapters.parse("perfquery", b"LinkDownedCounter:....5\n", ctx("hca-1"))
    [s] = adapters.parse("perfquery", b"LinkDownedCounter:....5\n", ctx("hca-1", "ib0"))
    assert s["port"] == "ib0"
    # a block with no counter is a sample with no reading (the decoder refuses it as no data)
    assert adapters.parse("perfquery", b"# Port counters: Lid 1 port 1\n", ctx("hca-1")) == [
        {"device": "hca-1", "port": "1", "ts": NOW}
    ]
    with pytest.raises(adapters.AdapterError, match=r"^No perfquery counters found\.$"):
        adapters.parse("perfquery", b"# nothing here\n\n", ctx("hca-1"))
    with pytest.raises(
        adapters.AdapterError, match=r"^perfquery output does not name the device: pass \?device="
    ):
        adapters.parse("perfquery", b"PortSelect:......3\n", ctx())


def test_xena_each_line_its_histogram_uncorrectable_and_corrected_codewords():
    """``<module>/<port> PP_RXFECSTATS 0 <n> <bins...> <uncorrectable> <total>``: the bins are the
    histogram (its last index the correction limit), the corrected codewords the bins but the
    first; the port is ?port= or the line's own; other lines are skipped."""
    body = b"""0/1 P_RESERVEDBY 0 ""
0/1 pp_rxfecstats 0 5 100 7 3 2 112
0/2 PP_RXFECSTATS 0 3 50 1 51
0/3 PP_TXSTATS 0 1 2 3
"""
    assert adapters.parse("xena", body, ctx("xena-1")) == [
        {
            "device": "xena-1",
            "port": "0/1",
            "ts": NOW,
            "fec_hist": [100, 7, 3],
            "fec_correction_limit": 2,
            "fec_uncorrectable_codewords": 2,
            "fec_corrected_codewords": 10,
        },
        {
            "device": "xena-1",
            "port": "0/2",
            "ts": NOW,
            "fec_hist": [50],
            "fec_correction_limit": 0,
            "fec_uncorrectable_codewords": 1,
            "fec_corrected_codewords": 0,
        },
    ]
    [s] = adapters.parse("xena", b"0/1 PP_RXFECSTATS 0 3 50 1 51\n", ctx("xena-1", "p1"))
    assert s["port"] == "p1"
    with pytest.raises(adapters.AdapterError, match=r"^PP_RXFECSTATS declares 4 values but has 3\.$"):
        adapters.parse("xena", b"0/1 PP_RXFECSTATS 0 4 50 1 51\n", ctx("xena-1"))
    with pytest.raises(adapters.AdapterError, match=r"^PP_RXFECSTATS declares 3 values but has 0\.$"):
        adapters.parse("xena", b"0/1 PP_RXFECSTATS 0 3\n", ctx("xena-1"))
    with pytest.raises(adapters.AdapterError, match=r"^PP_RXFECSTATS declares 2 values but has 2\.$"):
        adapters.parse("xena", b"0/1 PP_RXFECSTATS 0 2 1 51\n", ctx("xena-1"))
    with pytest.raises(adapters.AdapterError, match=r"^No PP_RXFECSTATS line found\.$"):
        adapters.parse("xena", b"0/1 PP_RXFECSTATS 0\n", ctx("xena-1"))
    with pytest.raises(adapters.AdapterError, match=r"^xena output does not name the device: pass \?device="):
        adapters.parse("xena", body, ctx())


# --- the dispatch: a body of another known format, and what an adapter could not read --------------


def test_a_body_of_another_known_format_is_refused_naming_it():
    """Posted under the wrong name, a body with another format's marks is refused with that
    format's name; with two others' marks, the first in the registry's order is named."""
    sonic_dom = (TEST_DATA / "real" / "sonic_eeprom_dom_qsfp28_aoc_Ethernet0.txt").read_bytes()
    with pytest.raises(
        adapters.AdapterError,
        match=r"^This is SONiC transceiver DOM output \(show interfaces transceiver eeprom --dom, or STATE_DB "
        r"TRANSCEIVER_DOM_SENSOR / TRANSCEIVER_DOM_THRESHOLD\), not ethtool-module output: "
        r"use \?format=sonic-dom\.$",
    ):
        adapters.parse("ethtool-module", sonic_dom, ctx("leaf-1", "Ethernet0"))
    with pytest.raises(
        adapters.AdapterError,
        match=r"^This is mlxlink output, not perfquery output: use \?format=mlxlink\.$",
    ):
        adapters.parse("perfquery", b"Raw Physical BER : 1E-9\n0/1 PP_RXFECSTATS 0 3 1 2 3\n", ctx("hca-1"))


def test_a_body_with_its_own_marks_or_one_its_adapter_also_reads_is_not_refused():
    """A body that carries its own format's marks is read even with another's; gNMI carries
    SONiC's COUNTERS hashes and ``openconfig`` is ``gnmi``; SONiC's counters adapter reads gNMI
    notifications; Prometheus text holds ethtool's names."""
    [s] = adapters.parse("xena", b"0/1 PP_RXFECSTATS 0 3 5 1 6\n# Raw Physical BER\n", ctx("xena-1"))
    assert s["fec_hist"] == [5]
    gnmi = b"""{"notification": {"update": [{"path": "COUNTERS/Ethernet4",
      "val": {"SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES": "10"}}]}}"""
    for fmt in ("gnmi", "openconfig"):
        [s] = adapters.parse(fmt, gnmi, ctx("leaf-1"))
        assert (s["port"], s["fec_corrected_codewords"]) == ("Ethernet4", 10)
    notification = b'{"notification": {"update": []}}'
    with pytest.raises(adapters.AdapterError) as refused:
        adapters.parse("sonic-counters", notification, ctx("leaf-1", "Ethernet0"))
    assert not str(refused.value).startswith("This is")
    c = ctx("host-1")
    out = adapters.parse("prometheus", b'node_ethtool_rx_corrected_bits_phy{device="eth0"} 5\n', c)
    assert [(s["port"], s["fec_corrected_bits"]) for s in out] == [("eth0", 5)]


def test_only_the_first_64_kib_are_searched_for_another_format():
    far = b"#" * (1 << 16) + b"\nPP_RXFECSTATS\n"
    with pytest.raises(adapters.AdapterError, match=r"^No perfquery counters found\.$"):
        adapters.parse("perfquery", far, ctx("hca-1"))
    near = b"#" * ((1 << 16) - len(b"PP_RXFECSTATS")) + b"PP_RXFECSTATS"
    with pytest.raises(adapters.AdapterError, match=r"use \?format=xena\.$"):
        adapters.parse("perfquery", near, ctx("hca-1"))


def test_what_an_adapter_could_not_read_is_one_refusal_naming_the_format():
    with pytest.raises(
        adapters.AdapterError,
        match=r"^Cannot read the body as xena: invalid literal for int\(\) with base 10: 'x'$",
    ):
        adapters.parse("xena", b"0/1 PP_RXFECSTATS 0 x\n", ctx("xena-1"))
    nested = (
        b'{"update": [{"path": "/a", "val": {"jsonVal": ' + b'{"a": ' * 1000 + b"1" + b"}" * 1000 + b"}}]}"
    )
    with pytest.raises(
        adapters.AdapterError, match=r"^Cannot read the body as gnmi: it is nested too deeply\.$"
    ):
        adapters.parse("gnmi", nested, ctx("leaf-1", "Ethernet0"))


# --- SONiC SAI counter names (shared by sonic-counters and gNMI) -----------------------------------


def test_sai_names_the_other_spellings_the_histogram_gaps_and_pfc_per_direction():
    """``SAI_PORT_STAT_IF_FEC_NOT_CORRECTABLE_FRAMES`` (no ``IN``), a RATES ``_last`` name, the
    codeword histogram with a missing and a zero bin, PFC frames summed per direction (a value
    that is no number counts 0), the ASIC's pause duration preferred to SONiC's estimate, which
    is then named with the counters no field takes."""
    body = b"""{"SAI_PORT_STAT_IF_FEC_NOT_CORRECTABLE_FRAMES": "4",
      "SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS_last": "77",
      "SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S0": "100",
      "SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S1": "0",
      "SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S3": "2",
      "SAI_PORT_STAT_PFC_3_TX_PKTS": "6", "SAI_PORT_STAT_PFC_4_TX_PKTS": "N/A",
      "SAI_PORT_STAT_PFC_3_RX_PKTS": "1",
      "SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "900", "SAI_PORT_STAT_PFC_4_RX_PAUSE_DURATION_US": "N/A",
      "EST_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "5", "SAI_PORT_STAT_IF_IN_OCTETS": "1"}"""
    c = ctx("leaf-1", "Ethernet0")
    assert adapters.parse("sonic-counters", body, c) == [
        {
            "device": "leaf-1",
            "port": "Ethernet0",
            "ts": NOW,
            "fec_uncorrectable_codewords": 4,
            "fec_corrected_bits": 77,
            "fec_hist": [100, 0, 0, 2],
            "pfc_pause_rx": 1,
            "pfc_pause_tx": 6,
            "pfc_pause_duration_us": 900,
        }
    ]
    assert dict(c.report.ignored) == {
        "EST_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": 1,
        "SAI_PORT_STAT_IF_IN_OCTETS": 1,
    }


def test_sai_without_the_asics_pause_duration_takes_sonics_estimate():
    body = b"""{"EST_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US": "5", "EST_PORT_STAT_PFC_4_RX_PAUSE_DURATION_US": "7",
      "EST_PORT_STAT_PFC_5_RX_PAUSE_DURATION_US": "x", "SAI_PORT_STAT_PFC_3_RX_PKTS": "2"}"""
    c = ctx("leaf-1", "Ethernet0")
    assert adapters.parse("sonic-counters", body, c) == [
        {"device": "leaf-1", "port": "Ethernet0", "ts": NOW, "pfc_pause_rx": 2, "pfc_pause_duration_us": 12}
    ]
    assert not c.report.ignored


def test_gnmi_a_single_ports_hash_at_the_bare_counters_path_takes_the_query_port():
    """``COUNTERS/<port>`` names the port only when a counter follows it: one port's hash posted
    at ``COUNTERS`` itself is the ?port='s, never a sample per counter named like a port."""
    body = b"""{"update": [{"path": "COUNTERS",
      "val": {"SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES": "5", "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES": "1"}}]}"""
    assert adapters.parse("gnmi", body, ctx("sonic-1", "Ethernet0")) == [
        {
            "device": "sonic-1",
            "port": "Ethernet0",
            "ts": NOW,
            "fec_corrected_codewords": 5,
            "fec_uncorrectable_codewords": 1,
        }
    ]


# --- Junos EVO pre-FEC BER and FEC histogram (hand-written from the element names) --------------
# Hand-written samples, not proof: no public real capture with these lines and a usable licence
# was found. The names are those of Juniper's own Apstra collectors for Junos EVO ``show
# interfaces extensive`` (ethernet-fec-statistics/pre-fec-ber, ethernet-fechistogram-statistics/
# bin-num, sym-live-err, sym-harvest-err) and the "PRE FEC BER <number>" line a Juniper engineer's
# script reads on a QFX5230; the values are made up.


def _evo_xml(fec_extra: str = "", bins: str = "") -> bytes:
    return f"""<rpc-reply xmlns:junos="http://xml.juniper.net/junos/23.4R2/junos">
<interface-information xmlns="http://xml.juniper.net/junos/23.4R2/junos-interface" junos:style="normal">
<physical-interface><name>et-0/0/56</name>
<ethernet-fec-mode junos:style="verbose"><enabled_fec_mode>FEC119</enabled_fec_mode></ethernet-fec-mode>
<ethernet-fec-statistics junos:style="verbose">
<fec_ccw_count>955</fec_ccw_count><fec_nccw_count>0</fec_nccw_count>
<fec_ccw_error_rate>3</fec_ccw_error_rate><fec_nccw_error_rate>0</fec_nccw_error_rate>{fec_extra}
</ethernet-fec-statistics>{bins}
</physical-interface></interface-information></rpc-reply>""".encode()


def _evo_bin(num: str, live: str, harvest: str) -> str:
    return (
        f"<ethernet-fechistogram-statistics><bin-num>{num}</bin-num><sym-live-err>{live}</sym-live-err>"
        f"<sym-harvest-err>{harvest}</sym-harvest-err></ethernet-fechistogram-statistics>"
    )


def _evo_json(body: bytes) -> bytes:
    """The same reply written the way ``| display json`` writes it."""
    import xml.etree.ElementTree as ET

    def conv(el):
        out = {}
        if el.text and el.text.strip():
            out["data"] = el.text.strip()
        for child in el:
            out.setdefault(child.tag.rsplit("}", 1)[-1], []).append(conv(child))
        return out

    root = ET.fromstring(body)  # noqa: S314 -- the test's own string
    return json.dumps({"interface-information": [conv(root[0])]}).encode()


def test_junos_evo_pre_fec_ber_and_fec_histogram_in_xml_and_json():
    """The BER as printed; each bin's count is live plus harvest, bins sorted by number whatever
    their order; an element without a bin number (Apstra's collector filters such an element
    out) is named, as are the FEC mode and rates; the JSON form stores the same."""
    bins = (
        _evo_bin("2", "0", "7")
        + _evo_bin("0", "12", "123456789")
        + _evo_bin("1", "3", "940")
        + "<ethernet-fechistogram-statistics><bin-num></bin-num></ethernet-fechistogram-statistics>"
        + _evo_bin("15", "0", "0")
    )
    body = _evo_xml("<pre-fec-ber>2.0625000318741e-10</pre-fec-ber>", bins)
    expected = [
        {
            "device": "qfx-1",
            "port": "et-0/0/56",
            "ts": NOW,
            "fec_corrected_codewords": 955,
            "fec_uncorrectable_codewords": 0,
            "pre_fec_ber": 2.0625000318741e-10,
            "fec_hist": [123456801, 943, 7, 0],
            "fec_hist_bins": [[0, 0], [1, 1], [2, 2], [15, 15]],
        }
    ]
    for form in (body, _evo_json(body)):
        c = ctx("qfx-1")
        out = adapters.parse("junos", form, c)
        assert out == expected
        assert c.report.ignored["ethernet-fechistogram-statistics without bin-num"] == 1
        assert c.report.ignored["fec_ccw_error_rate"] == 1 and c.report.ignored["ethernet-fec-mode"] == 1
        assert "pre-fec-ber" not in c.report.ignored
        decoded = decode_objects([{**out[0], "ts": NOW.timestamp()}], now=NOW, max_future=timedelta(0))
        assert decoded.errors == [] and len(decoded.samples) == 1


def test_junos_evo_ber_without_a_number_and_bad_bins():
    for text in ("N/A", "nan", "٣e-10", "-1e-5"):
        c = ctx("qfx-1")
        [s] = adapters.parse("junos", _evo_xml(f"<pre-fec-ber>{text}</pre-fec-ber>"), c)
        assert "pre_fec_ber" not in s and c.report.ignored["pre-fec-ber"] == 1, text
    c = ctx("qfx-1")
    [s] = adapters.parse(
        "junos",
        _evo_xml(
            bins="<ethernet-fechistogram-statistics><bin-num>3</bin-num></ethernet-fechistogram-statistics>"
        ),
        c,
    )
    assert "fec_hist" not in s and c.report.ignored["ethernet-fechistogram-statistics without a count"] == 1
    for bins, message in (
        (_evo_bin("1", "0", "5") + _evo_bin("1", "0", "6"), r"names bin 1 twice: send it once\.$"),
        (_evo_bin("x", "0", "5"), r"bin-num 'x' is not a bin number\.$"),
        (_evo_bin("256", "0", "5"), r"bin-num '256' is not a bin number\.$"),
        (_evo_bin("0", "-1", "5"), r"^Junos sym-live-err of et-0/0/56 is not a count: '-1'\.$"),
        (_evo_bin("0", "²", "5"), r"^Junos sym-live-err of et-0/0/56 is not a count: '²'\.$"),
        (_evo_bin("٣", "0", "5"), r"is not a bin number\.$"),
        (_evo_bin("0", "0", "9" * 5000), r"^Junos sym-harvest-err of et-0/0/56 is not a count: '9{40}'\.$"),
    ):
        with pytest.raises(adapters.AdapterError, match=message):
            adapters.parse("junos", _evo_xml(bins=bins), ctx("qfx-1"))


def test_junos_evo_pre_fec_ber_text_line():
    """The text's ``PRE FEC BER`` line (as a Juniper engineer's script reads it on a QFX5230)
    added to the real vMX extensive capture: read as printed; without a number it is named."""
    body = (TEST_DATA / "real" / "junos_show_interfaces_extensive_ge_vmx.txt").read_bytes()
    line = b"    FEC Uncorrected Errors Rate             0\n"
    assert line in body
    c = ctx("vmx")
    [s] = adapters.parse(
        "junos", body.replace(line, line + b"    PRE FEC BER          2.0625000318741e-10\n"), c
    )
    assert (s["port"], s["pre_fec_ber"], s["fec_corrected_codewords"]) == ("ge-0/0/0", 2.0625000318741e-10, 0)
    assert "PRE FEC BER" not in c.report.ignored
    c = ctx("vmx")
    [s] = adapters.parse("junos", body.replace(line, line + b"    PRE FEC BER          N/A\n"), c)
    assert "pre_fec_ber" not in s and c.report.ignored["PRE FEC BER"] == 1


# --- junos.py: the survivors of the 830 mutants of 2026-12-05 (issue 34) -------------------------


def test_junos_evo_bins_with_one_count_an_unknown_child_or_no_bin_num_and_the_bounds():
    """A bin with only one of its two counts is that count; an element without a ``bin-num``
    element at all, or with neither count, is named and the bins after it still read; a child
    cabletrack does not read is named by its name (never the ones it reads); bin 255 (decode's
    last bin) and a count of 20 digits (a 64-bit counter) are read."""
    bins = (
        "<ethernet-fechistogram-statistics><sym-live-err>4</sym-live-err></ethernet-fechistogram-statistics>"
        "<ethernet-fechistogram-statistics><bin-num>3</bin-num></ethernet-fechistogram-statistics>"
        "<ethernet-fechistogram-statistics><bin-num>0</bin-num><sym-live-err>5</sym-live-err>"
        "<bin-range>0-0</bin-range></ethernet-fechistogram-statistics>"
        "<ethernet-fechistogram-statistics><bin-num>1</bin-num>"
        "<sym-harvest-err>18446744073709551615</sym-harvest-err></ethernet-fechistogram-statistics>"
        + _evo_bin("255", "0", "2")
    )
    body = _evo_xml(bins=bins)
    for form in (body, _evo_json(body)):
        c = ctx("qfx-1")
        [s] = adapters.parse("junos", form, c)
        assert (s["fec_hist"], s["fec_hist_bins"]) == (
            [5, 18446744073709551615, 2],
            [[0, 0], [1, 1], [255, 255]],
        )
        assert c.report.ignored["ethernet-fechistogram-statistics without bin-num"] == 1
        assert c.report.ignored["ethernet-fechistogram-statistics without a count"] == 1
        assert c.report.ignored["bin-range"] == 1
        assert not {"bin-num", "sym-live-err", "sym-harvest-err"} & set(c.report.ignored)


def test_junos_evo_fec_and_bin_counts_refused_with_what_was_sent():
    """The exact 400 of an empty count, of one 21 digits long, of a long bin number (cut to 40
    characters); a FEC statistics element without ``fec_ccw_count`` still gives the uncorrected
    count, and a corrected count of 20 digits is read."""
    ccw = b"<fec_ccw_count>955</fec_ccw_count>"
    for bins, fec, message in (
        ("", b"<fec_ccw_count/>", r"^Junos fec_ccw_count is not a count: ''\.$"),
        (
            "",
            b"<fec_ccw_count>" + b"9" * 5000 + b"</fec_ccw_count>",
            r"^Junos fec_ccw_count is not a count: '9{40}'\.$",
        ),
        (
            _evo_bin("9" * 5000, "0", "1"),
            ccw,
            r"^Junos ethernet-fechistogram-statistics of et-0/0/56: bin-num '9{40}' is not a bin number\.$",
        ),
        (_evo_bin("0", "", "1"), ccw, r"^Junos sym-live-err of et-0/0/56 is not a count: ''\.$"),
        (
            _evo_bin("0", "0", "1" * 21),
            ccw,
            r"^Junos sym-harvest-err of et-0/0/56 is not a count: '1{21}'\.$",
        ),
    ):
        with pytest.raises(adapters.AdapterError, match=message):
            adapters.parse("junos", _evo_xml(bins=bins).replace(ccw, fec), ctx("qfx-1"))
    [s] = adapters.parse("junos", _evo_xml().replace(ccw, b""), ctx("qfx-1"))
    assert "fec_corrected_codewords" not in s and s["fec_uncorrectable_codewords"] == 0
    [s] = adapters.parse(
        "junos", _evo_xml().replace(ccw, b"<fec_ccw_count>18446744073709551615</fec_ccw_count>"), ctx("qfx-1")
    )
    assert s["fec_corrected_codewords"] == 18446744073709551615


def test_junos_json_with_plain_values_and_objects_not_in_arrays():
    """JSON that writes an element as a plain object, a string or a number rather than Junos' array
    of ``{"data": ...}`` objects is read as the same tree; ``"data": [null]`` is an empty element
    (a bin without its number, named); text that is no JSON is refused with the parser's reason."""
    body = (
        b'{"interface-information": {"physical-interface": {"name": "et-0/0/7",'
        b' "ethernet-fec-statistics": {"fec_ccw_count": "5", "fec_nccw_count": 7},'
        b' "ethernet-fechistogram-statistics": [{"bin-num": [{"data": [null]}], "sym-live-err": [{"data": "1"}]}]}}}'
    )
    c = ctx("qfx-1")
    assert adapters.parse("junos", body, c) == [
        {
            "device": "qfx-1",
            "port": "et-0/0/7",
            "ts": NOW,
            "fec_corrected_codewords": 5,
            "fec_uncorrectable_codewords": 7,
        }
    ]
    assert c.report.ignored["ethernet-fechistogram-statistics without bin-num"] == 1
    with pytest.raises(
        adapters.AdapterError, match=r"^Junos JSON is not valid JSON: Expecting property name"
    ):
        adapters.parse("junos", b"{not json", ctx("qfx-1"))


def test_junos_prompt_lines_after_a_blank_line_of_256_bytes_or_not_ascii():
    """The ``{master:0}`` line is found after a blank first line; a last line of 256 bytes or more
    is never looked at (it stays, and the JSON after it is refused), one of 255 is; a first or
    last line that is not ASCII (a description, a note) is read past, not a crash."""
    json_body = (
        b'{"interface-information": [{"physical-interface": [{"name": [{"data": "et-0/0/1"}],'
        b' "ethernet-fec-statistics": [{"fec_ccw_count": [{"data": "3"}]}]}]}]}'
    )
    expected = [{"device": "qfx-1", "port": "et-0/0/1", "ts": NOW, "fec_corrected_codewords": 3}]
    assert adapters.parse("junos", b"\n{master:0}\n" + json_body, ctx("qfx-1")) == expected
    assert adapters.parse("junos", json_body + b"\n" + b" " * 245 + b"{master:0}", ctx("qfx-1")) == expected
    with pytest.raises(adapters.AdapterError, match=r"^Junos JSON is not valid JSON: Extra data"):
        adapters.parse("junos", json_body + b"\n" + b" " * 246 + b"{master:0}", ctx("qfx-1"))
    text = (
        "Physical interface: ge-0/0/1, Enabled, Physical link is Up  # lien Zürich–Genève\n"
        "    Module temperature                        :  40 degrees C / 104 degrees F\n"
        "    Description : lien Zürich–Genève\n"
    ).encode()
    c = ctx("mx-1")
    assert adapters.parse("junos", text, c) == [
        {"device": "mx-1", "port": "ge-0/0/1", "ts": NOW, "temperature_c": 40.0}
    ]
    assert dict(c.report.ignored) == {"Description": 1}


def test_junos_text_reads_past_a_blank_line_and_the_ber_and_names_a_table_row_by_its_first_40_characters():
    row = "    0                    0                    0                    0"
    text = (
        "Physical interface: et-0/0/3, Enabled, Physical link is Up\n"
        "    PRE FEC BER          2.5e-09\n"
        "    FEC Corrected Errors                 12\n"
        "\n"
        f"{row}\n"
        "    Module temperature                        :  40 degrees C / 104 degrees F\n"
    ).encode()
    c = ctx("mx-1")
    assert adapters.parse("junos", text, c) == [
        {
            "device": "mx-1",
            "port": "et-0/0/3",
            "ts": NOW,
            "pre_fec_ber": 2.5e-09,
            "fec_corrected_codewords": 12,
            "temperature_c": 40.0,
        }
    ]
    assert dict(c.report.ignored) == {row.strip()[:40]: 1}


def test_junos_xml_an_empty_name_or_lane_index_a_long_lane_index_and_a_lane_threshold():
    """``<name/>`` is a port without a name; an empty or long ``lane-index`` is quoted (cut to 20
    characters) in the 400; a threshold written inside a lane block is the module's threshold; a
    reply whose opening (a long comment) hides its root from the ``junos:`` fix-up is refused as
    not well-formed, never a crash."""
    with pytest.raises(adapters.AdapterError, match=r"^Junos output: a physical-interface without a name\.$"):
        adapters.parse(
            "junos",
            b"<interface-information><physical-interface><name/></physical-interface></interface-information>",
            ctx("mx-1"),
        )
    for index, quoted in (("", "''"), ("x" * 50, "'" + "x" * 20 + "'")):
        rows = [
            (
                "optics-diagnostics-lane-values",
                [("lane-index", index), ("laser-rx-optical-power-dbm", "-1.00")],
            )
        ]
        for body in (_junos_xml("et-0/0/1", rows), _junos_json("et-0/0/1", rows)):
            with pytest.raises(
                adapters.AdapterError,
                match=rf"^Junos optics-diagnostics-lane-values of et-0/0/1 with lane-index {quoted}: each lane needs its number\.$",
            ):
                adapters.parse("junos", body, ctx("mx-1"))
    rows = [
        (
            "optics-diagnostics-lane-values",
            [
                ("lane-index", "0"),
                ("laser-rx-optical-power-dbm", "-1.00"),
                ("laser-rx-power-high-alarm-threshold-dbm", "2.00"),
            ],
        )
    ]
    for body in (_junos_xml("et-0/0/1", rows), _junos_json("et-0/0/1", rows)):
        [s] = adapters.parse("junos", body, ctx("mx-1"))
        assert (s["rx_power_dbm"], s["module_thresholds"]) == ([-1.0], {"rx_power_high_alarm": 2.0})
    hidden = (
        "<!-- " + "x" * 300 + " -->"
        '<interface-information junos:style="normal"><physical-interface><name>ge-0/0/1</name>'
        "</physical-interface></interface-information>"
    ).encode()
    with pytest.raises(adapters.AdapterError, match=r"^Junos XML is not well-formed: unbound prefix"):
        adapters.parse("junos", hidden, ctx("mx-1"))


def test_junos_text_threshold_without_a_number_and_a_tab_in_its_label_is_named_by_its_first_40_characters():
    """A threshold line without a number is named in ignored; one whose label holds a tab (a
    capture that kept a tab) is named by the first 40 characters of the line, not dropped."""
    line = "Laser output power\thigh alarm threshold    :  - Inf dBm"
    text = f"Physical interface: et-0/0/4, Enabled, Physical link is Up\n    {line}\n".encode()
    c = ctx("mx-1")
    assert adapters.parse("junos", text, c) == [{"device": "mx-1", "port": "et-0/0/4", "ts": NOW}]
    assert dict(c.report.ignored) == {"Laser output power\thigh alarm threshold ": 1}


@pytest.mark.parametrize(
    ("fmt", "name", "device"),
    [
        ("junos", "junos_show_interfaces_diagnostics_optics_et_qsfp28_4lanes.txt", "qfx-1"),
        ("arista-eos", "arista_eos_show_interfaces_transceiver_napalm_40gbase-sr4.json", "eos-1"),
        ("ethtool-module", "ethtool_m_qsfp28_sr4_mellanox_cumulus.txt", "host-1"),
    ],
)
def test_a_capture_saved_with_a_byte_order_mark_reads_as_without_it(fmt, name, device):
    """Editors and tools on Windows save text with a UTF-8 byte-order mark. A Junos capture so
    saved was refused as "ethtool -m module EEPROM output ... use ?format=ethtool-module" (its
    first line no longer started with the Junos mark); JSON ones were not valid JSON."""
    body = (REAL / name).read_bytes()
    c1, c2 = ctx(device, "Ethernet0"), ctx(device, "Ethernet0")
    assert adapters.parse(fmt, b"\xef\xbb\xbf" + body, c1) == adapters.parse(fmt, body, c2)
    assert c1.report.as_dict() == c2.report.as_dict()


def test_junos_text_a_reading_printed_twice_in_one_block_or_lane_is_refused():
    """The text form refuses what the XML and JSON forms refuse: one reading printed twice for
    one port (or twice in one lane's section) says two things about it. Before, the last one
    printed replaced the first in silence. The same reading in two lanes is two lanes."""
    head = "Physical interface: et-0/0/5, Enabled, Physical link is Up\n"
    cases = {
        "Module temperature": "    Module temperature  :  36 degrees C / 97 degrees F\n",
        "Module voltage": "    Module voltage  :  3.2680 V\n",
        "FEC Corrected Errors": "    FEC Corrected Errors    12\n",
        "PRE FEC BER": "    PRE FEC BER    2.0e-10\n",
    }
    for label, line in cases.items():
        body = (head + line + "    Laser output power  :  0.6560 mW / -1.83 dBm\n" + line).encode()
        with pytest.raises(
            adapters.AdapterError,
            match=rf"^Junos output prints '{label}' twice for et-0/0/5: send it once\.$",
        ):
            adapters.parse("junos", body, ctx("mx-1"))
    lane = "    Lane 1\n      Laser bias current  :  7.000 mA\n"
    with pytest.raises(
        adapters.AdapterError,
        match=r"^Junos output prints 'Laser bias current' twice for lane 1 of et-0/0/5: send it once\.$",
    ):
        adapters.parse(
            "junos", (head + lane + "      Laser bias current  :  8.000 mA\n").encode(), ctx("mx-1")
        )
    [s] = adapters.parse(
        "junos",
        (
            head + "    Module temperature  :  36 degrees C\n" + lane + lane.replace("Lane 1", "Lane 2")
        ).encode(),
        ctx("mx-1"),
    )
    assert (s["temperature_c"], s["bias_ma"]) == (36.0, [None, 7.0, 7.0])
