"""Native collector outputs -> samples (pure: no database)."""

from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.telemetry import adapters
from inventory.core.telemetry.adapters import nic_stats
from inventory.core.telemetry.decode import decode_objects
from tests.paths import TEST_DATA

# A copy of shared/data/telemetry (see its MANIFEST.md for the sources of each file).
DATA = TEST_DATA / "telemetry"
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
CTX = adapters.Context(device="host-a", port="p1", ts=NOW)

# file prefix -> adapter; shared with the endpoint test
FORMAT_OF = {
    "01": "ethtool-fec",
    "02": "ethtool-fec",
    "03": "ethtool-fec",
    "04": "ethtool-fec",
    "05": "ethtool-fec",
    "06": "mlxlink",
    "07": "mlxlink",
    "08": "mlxlink",
    "09": "mlxlink",
    "10": "perfquery",
    "11": "perfquery",
    "12": "perfquery",
    "13": "gnmi",
    "14": "sonic-cli",
    "15": "sonic-cli",
    "16": "sonic-cli",
    "17": "sonic-cli",
    "18": "sonic-counters",
    "19": "ethtool-module",
    "20": "xena",
}


def parse(name: str, ctx=CTX) -> list[dict]:
    path = next(DATA.glob(f"{name}_*"))
    return adapters.parse(FORMAT_OF[name], path.read_bytes(), ctx)


def test_every_shared_file_has_an_adapter_and_decodes_cleanly():
    files = sorted(p for p in DATA.iterdir() if p.name[:2].isdigit())
    assert len(files) == 20
    for path in files:
        ctx = adapters.Context(device="host-a", port="p1", ts=NOW)
        samples = adapters.parse(FORMAT_OF[path.name[:2]], path.read_bytes(), ctx)
        decoded = decode_objects(samples, now=NOW, max_future=timedelta(minutes=5))
        if path.name.startswith("12"):
            # perfquery -E: receive error details, none of them a reading cabletrack stores: the
            # item is refused as no_data and every counter is named as ignored (not dropped in silence)
            assert [e.code for e in decoded.errors] == ["no_data"]
            assert set(ctx.report.ignored) == {
                "PortLocalPhysicalErrors",
                "PortMalformedPktErrors",
                "PortBufferOverrunErrors",
                "PortDLIDMappingErrors",
                "PortVLMappingErrors",
                "PortLoopingErrors",
            }
            continue
        assert samples and not decoded.errors, (path.name, decoded.errors)


def test_ethtool_fec_text_and_json_agree():
    for a, b in (("01", "02"), ("03", "04")):
        assert parse(a) == parse(b)
    hist = parse("03")[0]
    assert hist["port"] == "eni8np1"
    assert hist["fec_hist"] == [445, 12, 2]
    assert hist["fec_hist_bins"] == [[0, 0], [1, 3], [4, 7]]
    assert parse("01")[0]["fec_uncorrectable_codewords"] == 145


def test_mlxlink_json_counters_dom_histogram_identity():
    s = parse("07")[0]
    assert s["fec_corrected_bits"] == 5550000 + 28835305 + 14640119 + 16746846
    assert s["pre_fec_ber"] == 5e-10
    assert s["rx_power_dbm"] == [3.608, 3.292, 3.237, 2.651]
    assert s["voltage_v"] == pytest.approx(3.2289)
    assert s["module_vendor"] == "SAKURA" and s["module_part"] == "OSFP-400G-DR4"
    assert s["fec_hist"][:3] == [22858119037881, 65755507, 7970]
    assert s["fec_hist_bins"][15] == [15, 15] and s["fec_correction_limit"] == 15
    assert (s["speed_gbps"], s["link_width"]) == (400.0, 4)  # the link as trained (link_degraded)


def test_mlxlink_text():
    module = parse("08")[0]
    assert module["module_serial"] == "CWJH05025502589"
    assert module["temperature_c"] == 54.0
    counters = parse("09")[0]
    assert counters["fec_corrected_bits"] == 3946476397 + 5120336064 + 7692183445 + 3026261414
    assert counters["pre_fec_ber"] == 2e-9 and counters["link_down_events"] == 0


def test_perfquery_keeps_ib_symbol_errors_apart_and_names_ports():
    two = parse("10", adapters.Context(device="hca", port=None, ts=NOW))
    assert [s["port"] for s in two] == ["1", "2"]
    assert all("fec_symbol_errors" not in s and s["ib_symbol_errors"] == 0 for s in two)
    templ = parse("10", adapters.Context(device="hca", port="mlx5_0/{port}", ts=NOW))
    assert [s["port"] for s in templ] == ["mlx5_0/1", "mlx5_0/2"]
    switch = parse("11")[0]
    assert switch["link_down_events"] == 1


def test_sonic_counters_gnmi_histogram_and_pfc():
    s = parse("13")[0]
    assert s["port"] == "Ethernet0"
    assert s["fec_corrected_codewords"] == 433513349
    assert s["fec_symbol_errors"] == 433516981
    assert len(s["fec_hist"]) == 16 and s["fec_hist"][1] == 433509717
    assert s["pfc_pause_rx"] == 0
    assert s["ts"] == datetime.fromtimestamp(1731590441333983199 / 1e9, UTC)


def test_sonic_cli_tables():
    rows = parse("15")
    assert [r["port"] for r in rows][-1] == "Ethernet48"
    assert rows[-1]["fec_corrected_codewords"] == 48315381 and rows[-1]["pre_fec_ber"] == 7.24e-10
    flr = parse("16")
    assert flr[0]["fec_uncorrectable_codewords"] == 4
    hist = parse("17", adapters.Context(device="sw", port=None, ts=NOW))[0]
    assert hist["port"] == "Ethernet0" and hist["fec_hist"][0] == 77092897948028


def test_sonic_redis_rates_use_the_port_name_map():
    s = parse("18", adapters.Context(device="sw", port=None, ts=NOW))[0]
    assert s["port"] == "Ethernet354"
    assert s["fec_corrected_bits"] == 63971 and s["fec_uncorrectable_codewords"] == 0


def test_ethtool_module_dom_and_thresholds():
    s = parse("19")[0]
    assert s["module_serial"] == "MT1708FT01255"
    assert s["rx_power_dbm"] == [-0.12, -0.09, 0.55, 0.55]
    assert s["tx_power_dbm"] == [1.44, 1.20, 1.26, 1.27]
    assert s["rx_power_low_warn_dbm"] == -10.30 and s["rx_power_low_alarm_dbm"] == -13.31


def test_xena_histogram_with_uncorrectable_and_total():
    s = parse("20")[0]
    assert len(s["fec_hist"]) == 16
    assert s["fec_uncorrectable_codewords"] == 0
    assert s["fec_corrected_codewords"] == 460533565 + 106553 + 86


def test_mlx5_ethtool_statistics():
    text = b"""NIC statistics:
     rx_packets: 10
     rx_corrected_bits_phy: 12345
     link_down_events_phy: 2
     rx_prio0_pause: 5
     rx_prio3_pause: 7
     tx_prio3_pause: 1
     rx_prio3_pause_duration: 900
"""
    s = adapters.parse("ethtool-stats", text, CTX)[0]
    assert s["fec_corrected_bits"] == 12345 and s["link_down_events"] == 2
    assert (s["pfc_pause_rx"], s["pfc_pause_tx"], s["pfc_pause_duration_us"]) == (12, 1, 900)


def test_prometheus_node_exporter_ethtool_and_cabletrack_series():
    text = b"""# HELP node_ethtool_rx_corrected_bits_phy Network interface rx_corrected_bits_phy
# TYPE node_ethtool_rx_corrected_bits_phy untyped
node_ethtool_rx_corrected_bits_phy{device="eth1"} 1.2345e+06
node_ethtool_link_down_events_phy{device="eth1"} 3
node_ethtool_rx_prio3_pause{device="eth1"} 42
node_ethtool_rx_corrected_bits_phy{device="eth2"} NaN
cabletrack_fec_corrected_codewords_total{device="leaf-1",port="Ethernet1/1"} 77 1764417600000
cabletrack_pre_fec_ber{device="leaf-1",port="Ethernet1/1"} 2.5e-09 1764417600000
"""
    out = adapters.parse("prometheus", text, adapters.Context(device="gpu-node-1", port=None, ts=NOW))
    by_port = {s["port"]: s for s in out}
    eth1 = by_port["eth1"]
    assert eth1["device"] == "gpu-node-1"
    assert (eth1["fec_corrected_bits"], eth1["link_down_events"], eth1["pfc_pause_rx"]) == (1234500, 3, 42)
    direct = by_port["Ethernet1/1"]
    assert direct["device"] == "leaf-1" and direct["fec_corrected_codewords"] == 77
    assert direct["pre_fec_ber"] == 2.5e-9
    assert direct["ts"] == datetime.fromtimestamp(1764417600, UTC)


def test_openconfig_gnmic_transceiver_channels_and_lldp():
    body = b"""[{"source": "leaf-1:57400", "timestamp": 1764417600000000000, "updates": [
      {"Path": "components/component[name=Ethernet1]/transceiver",
       "values": {"components/component/transceiver": {
          "state": {"vendor": "NVIDIA", "vendor-part": "MMS4X00-NM", "serial-no": "MT123",
                    "fec-corrected-bits": "1000", "fec-uncorrectable-blocks": "2",
                    "pre-fec-ber": {"instant": 2.5e-9}},
          "physical-channels": {"channel": [
             {"index": 0, "state": {"input-power": {"instant": -1.5}, "output-power": {"instant": 1.0}}},
             {"index": 1, "state": {"input-power": {"instant": -2.5}, "output-power": {"instant": 1.1}}}]}}}},
      {"Path": "lldp/interfaces/interface[name=Ethernet1]/neighbors/neighbor[id=1]/state",
       "values": {"lldp/interfaces/interface/neighbors/neighbor/state": {"system-name": "spine-1", "port-id": "Ethernet7"}}}
    ]}]"""
    s = adapters.parse("gnmi", body, adapters.Context(device="leaf-1", port=None, ts=NOW))
    assert len(s) == 1
    s = s[0]
    assert s["port"] == "Ethernet1"
    assert (s["module_vendor"], s["module_part"], s["module_serial"]) == ("NVIDIA", "MMS4X00-NM", "MT123")
    assert s["fec_corrected_bits"] == 1000 and s["fec_uncorrectable_codewords"] == 2
    assert s["pre_fec_ber"] == 2.5e-9
    assert s["rx_power_dbm"] == [-1.5, -2.5] and s["tx_power_dbm"] == [1.0, 1.1]
    assert (s["neighbor_device"], s["neighbor_port"]) == ("spine-1", "Ethernet7")


@pytest.mark.parametrize(
    ("fmt", "body"),
    [
        ("ethtool-fec", b"nothing here"),
        ("mlxlink", b'{"result": 5}'),
        ("perfquery", b""),
        ("sonic-cli", b"hello"),
        ("gnmi", b"[]"),
        ("prometheus", b"this is not { prometheus"),
        ("xena", b"0/1 PP_RXFECSTATS 0 18 1 2"),
        ("ethtool-fec", b"[{"),
    ],
)
def test_unreadable_native_bodies_raise_a_clear_error(fmt, body):
    with pytest.raises(adapters.AdapterError):
        adapters.parse(fmt, body, CTX)


def test_ethtool_stats_of_bnxt_en_and_ice_map_through_the_one_table():
    """Names as the drivers' string tables spell them (bnxt_ethtool.c, ice_ethtool.c); a
    hand-written edge case, not proof: no public real capture of either was found."""
    bnxt = b"""NIC statistics:
     rx_fec_corrected_blocks: 17
     rx_fec_uncorrectable_blocks: 1
     rx_corrected_bits: 900
     rx_bits: 123456789
     link_down_events: 3
     rx_pfc_ena_frames_pri3: 40
     tx_pfc_ena_frames_pri3: 2
     pfc_pri3_rx_duration_us: 5000
     rx_pcs_symbol_err: 9
"""
    ctx = adapters.Context(device="host-a", port="p1", ts=NOW)
    s = adapters.parse("ethtool-stats", bnxt, ctx)[0]
    assert (s["fec_corrected_codewords"], s["fec_uncorrectable_codewords"], s["fec_corrected_bits"]) == (
        17,
        1,
        900,
    )
    assert (s["rx_bits"], s["link_down_events"]) == (123456789, 3)
    assert (s["pfc_pause_rx"], s["pfc_pause_tx"], s["pfc_pause_duration_us"]) == (40, 2, 5000)
    assert dict(ctx.report.ignored) == {"rx_pcs_symbol_err": 1}  # PCS symbols are not FEC symbols
    # ice_get_strings: "rx_priority_%u_xon.nic", "rx_priority_%u_xoff.nic", and the same for tx
    ice = b"""NIC statistics:
     tx_priority_3_xon.nic: 3
     tx_priority_3_xoff.nic: 4
     rx_priority_3_xon.nic: 10
     rx_priority_3_xoff.nic: 11
     rx_priority_4_xoff.nic: 1
"""
    ctx = adapters.Context(device="host-a", port="p1", ts=NOW)
    s = adapters.parse("ethtool-stats", ice, ctx)[0]
    assert (s["pfc_pause_rx"], s["pfc_pause_tx"]) == (12, 4)
    assert dict(ctx.report.ignored) == {"tx_priority_3_xon.nic": 1, "rx_priority_3_xon.nic": 1}
    # older i40e drivers: the "port." prefix and no suffix (ethq's capture of 2018; current ones
    # print port.rx_priority_N_xoff_rx, tests/data/real/ethtool_S_i40e_10g_sr_xoff_rx_names.txt)
    i40e = b"""NIC statistics:
     port.tx_priority_3_xoff: 2
     port.rx_priority_3_xon: 5
     port.rx_priority_3_xoff: 6
"""
    ctx = adapters.Context(device="host-a", port="p1", ts=NOW)
    s = adapters.parse("ethtool-stats", i40e, ctx)[0]
    assert (s["pfc_pause_rx"], s["pfc_pause_tx"]) == (6, 2)
    assert dict(ctx.report.ignored) == {"port.rx_priority_3_xon": 1}


@pytest.mark.parametrize(
    ("driver_stat", "series"),
    [
        # node_exporter's own expectations (collector/ethtool_linux_test.go @ a7dcc3a0)
        ("port.rx_errors", "port_received_errors"),
        ("Queue[0] AllocFails", "queue_0_allocfails"),
        ("Tx LPI entry count", "transmitted_lpi_entry_count"),
        ("[3]: tx_bytes", "3_transmitted_bytes"),
        ("     err", "err"),
        # and the names the table reads
        ("rx_prio3_pause", "received_prio3_pause"),
        ("rx_priority_3_xoff.nic", "received_priority_3_xoff_nic"),
        ("pfc_pri3_rx_duration_us", "pfc_pri3_received_duration_us"),
        ("link_down_events_phy", "link_down_events_phy"),
        ("port.rx_priority_3_xoff_rx", "port_received_priority_3_xoff_received"),
    ],
)
def test_node_exporter_spells_a_driver_stat_as_its_collector_does(driver_stat, series):
    assert nic_stats.node_exporter_stat(driver_stat) == series


def test_prometheus_reads_node_exporter_names_of_mlx5_bnxt_and_ice_counters():
    """node_exporter writes ``rx``/``tx`` as ``received``/``transmitted`` and a dot as ``_``
    (buildEthtoolFQName): the one table reads them. Hand-written in that spelling, not proof."""
    text = b"""node_ethtool_received_corrected_bits_phy{device="ens1f0np0"} 1234567
node_ethtool_link_down_events_phy{device="ens1f0np0"} 2
node_ethtool_received_prio3_pause{device="ens1f0np0"} 4242
node_ethtool_transmitted_prio3_pause{device="ens1f0np0"} 7
node_ethtool_received_prio3_pause_duration{device="ens1f0np0"} 900
node_ethtool_received_pcs_symbol_err_phy{device="ens1f0np0"} 38
node_ethtool_received_fec_corrected_blocks{device="bnxt0"} 17
node_ethtool_received_pfc_ena_frames_pri3{device="bnxt0"} 40
node_ethtool_pfc_pri3_received_duration_us{device="bnxt0"} 5000
node_ethtool_received_priority_3_xoff_nic{device="ice0"} 11
node_ethtool_transmitted_priority_3_xoff_nic{device="ice0"} 4
node_ethtool_received_priority_3_xon_nic{device="ice0"} 10
node_ethtool_port_received_priority_3_xoff_received{device="i40e0"} 9
node_ethtool_port_transmitted_priority_3_xoff_transmitted{device="i40e0"} 3
"""
    ctx = adapters.Context(device="gpu-node-1", port=None, ts=NOW)
    by_port = {s["port"]: s for s in adapters.parse("prometheus", text, ctx)}
    mlx5, bnxt, ice = by_port["ens1f0np0"], by_port["bnxt0"], by_port["ice0"]
    assert (mlx5["fec_corrected_bits"], mlx5["link_down_events"]) == (1234567, 2)
    assert (mlx5["pfc_pause_rx"], mlx5["pfc_pause_tx"], mlx5["pfc_pause_duration_us"]) == (4242, 7, 900)
    assert (bnxt["fec_corrected_codewords"], bnxt["pfc_pause_rx"], bnxt["pfc_pause_duration_us"]) == (
        17,
        40,
        5000,
    )
    assert (ice["pfc_pause_rx"], ice["pfc_pause_tx"]) == (11, 4)
    assert (by_port["i40e0"]["pfc_pause_rx"], by_port["i40e0"]["pfc_pause_tx"]) == (9, 3)
    # what the table does not read is named as it came, not in the table's words
    assert dict(ctx.report.ignored) == {
        "node_ethtool_received_pcs_symbol_err_phy": 1,
        "node_ethtool_received_priority_3_xon_nic": 1,
    }


def test_goarista_gnmi_get_text_scalar_and_json_values():
    """goarista's ``gnmi get`` prints a scalar after the path's colon and JSON on the lines below."""
    body = b"""/interfaces/interface[name=Ethernet1]/state/admin-status: UP
/interfaces/interface[name=Ethernet1]/ethernet/state/counters/in-mac-pause-frames: 7
/components/component[name=Ethernet1 transceiver]/transceiver/physical-channels/channel[index=1]/state:
{
  "openconfig-platform-transceiver:input-power": {"instant": "-3.5"}
}
"""
    ctx = adapters.Context(device="leaf-1", port=None, ts=NOW)
    (s,) = adapters.parse("gnmi", body, ctx)
    assert (s["port"], s["ts"], s["pfc_pause_rx"]) == ("Ethernet1", NOW, 7)
    assert s["rx_power_dbm"] == [None, -3.5]  # channel 1; channel 0 not in the output
    assert dict(ctx.report.ignored) == {"interfaces/interface/state/admin-status": 1}
    with pytest.raises(adapters.AdapterError, match="before any path"):
        adapters.parse("gnmi", b"/usr/bin/gnmi exited with status 1\n", ctx)
    cut = body.rsplit(b"}", 2)[0]  # the JSON value cut short: refused, not read as a string
    with pytest.raises(adapters.AdapterError, match="not valid JSON"):
        adapters.parse("gnmi", cut, ctx)


def test_a_threshold_without_a_number_is_named_not_dropped():
    """A threshold printed without a number (ethtool's "0.0000 mW / -inf dBm" for one the module
    does not set; Junos' "- Inf") is no threshold: it is named in ``ignored``, never stored and
    never lost without a word. Edge cases written from the real captures, not proof."""
    real = TEST_DATA / "real"
    cases = [
        (
            "junos",
            (real / "junos_show_interfaces_diagnostics_optics_xe_sfp.txt")
            .read_bytes()
            .replace(b"0.0363 mW / -14.40 dBm", b"0.0000 mW / - Inf dBm"),
            "Laser rx power low warning threshold",
        ),
        (
            "junos",
            (real / "junos_get-interface-optics-diagnostics-information_xe_sfp_napalm.xml")
            .read_bytes()
            .replace(b">-18.01<", b">- Inf<"),
            "laser-rx-power-low-warn-threshold-dbm",
        ),
        (
            "ethtool-module",
            (real / "ethtool_m_sfp_10gsr_oem_ice.txt")
            .read_bytes()
            .replace(b"0.0355 mW / -14.50 dBm", b"0.0000 mW / -inf dBm"),
            "Laser rx power low warning threshold",
        ),
    ]
    for fmt, body, name in cases:
        ctx = adapters.Context(device="leaf-1", port="xe-0/1/7", ts=NOW)
        [s] = adapters.parse(fmt, body, ctx)
        assert "rx_power_low_warn" not in s["module_thresholds"], fmt
        assert s.get("rx_power_low_warn_dbm") is None
        assert ctx.report.ignored[name] == 1, (fmt, dict(ctx.report.ignored))


def test_prometheus_label_values_unescape_exactly_backslash_quote_and_newline():
    r"""The exposition format escapes ``\\``, ``\"`` and ``\n`` in a label value and nothing
    else: UTF-8 text is itself, and an unknown escape (``\t``) stays as written (as Prometheus'
    own parser keeps it)."""
    text = 'node_ethtool_link_down_events_phy{hostname="café",device="a\\\\b\\"c\\nd\\te"} 1\n'.encode()
    [s] = adapters.parse("prometheus", text, adapters.Context(device=None, port=None, ts=NOW))
    assert (s["device"], s["port"]) == ("café", 'a\\b"c\nd\\te')


JUNOS_FEC_XML = b"""<rpc-reply xmlns:junos="http://xml.juniper.net/junos/17.4R1/junos"><interface-information>
<physical-interface><name>et-0/0/1</name><oper-status>up</oper-status>
<ethernet-fec-statistics junos:style="verbose">
<fec_ccw_count>1234</fec_ccw_count><fec_nccw_count>5</fec_nccw_count>
<fec_ccw_error_rate>12</fec_ccw_error_rate><fec_nccw_error_rate>0</fec_nccw_error_rate>
</ethernet-fec-statistics></physical-interface></interface-information></rpc-reply>"""
JUNOS_FEC_JSON = b"""{"interface-information" : [{
  "attributes" : {"junos:style" : "normal"},
  "physical-interface" : [{
    "name" : [{"data" : "et-0/0/1"}],
    "oper-status" : [{"data" : "up"}],
    "ethernet-fec-statistics" : [{
      "attributes" : {"junos:style" : "verbose"},
      "fec_ccw_count" : [{"data" : "1234"}],
      "fec_nccw_count" : [{"data" : "5"}],
      "fec_ccw_error_rate" : [{"data" : "12"}],
      "fec_nccw_error_rate" : [{"data" : "0"}]}]}]}]}
"""


@pytest.mark.parametrize("body", [JUNOS_FEC_XML, JUNOS_FEC_JSON], ids=["xml", "json"])
def test_junos_interface_information_fec_counts_xml_and_json_alike(body):
    """Hand-written in the shape of the real vQFX capture with counts that are not 0, so that
    corrected and uncorrected cannot be swapped unseen (edge case, not proof)."""
    ctx = adapters.Context(device="qfx-1", port=None, ts=NOW)
    [s] = adapters.parse("junos", body, ctx)
    assert (s["port"], s["fec_corrected_codewords"], s["fec_uncorrectable_codewords"]) == (
        "et-0/0/1",
        1234,
        5,
    )
    assert dict(ctx.report.ignored) == {"oper-status": 1, "fec_ccw_error_rate": 1, "fec_nccw_error_rate": 1}


def test_junos_json_naming_a_stored_element_twice_is_refused():
    """Junos repeats a key for a repeated element, so a repeated key is read as two elements;
    but a counter cabletrack stores, named twice in one element, would say two things."""
    body = JUNOS_FEC_JSON.replace(
        b'"fec_nccw_count" : [{"data" : "5"}],',
        b'"fec_nccw_count" : [{"data" : "5"}], "fec_nccw_count" : [{"data" : "7"}],',
    )
    with pytest.raises(adapters.AdapterError, match="fec_nccw_count twice"):
        adapters.parse("junos", body, adapters.Context(device="qfx-1", port=None, ts=NOW))


def test_junos_text_capture_opening_with_the_prompt_line_is_read_as_text():
    """A CLI capture on a virtual-chassis member may open with "{master:0}": that brace is no
    JSON body (edge case on the real capture)."""
    text = (TEST_DATA / "real" / "junos_show_interfaces_diagnostics_optics_xe_sfp.txt").read_bytes()
    ctx = adapters.Context(device="qfx-1", port=None, ts=NOW)
    [s] = adapters.parse("junos", b"{master:0}\n" + text, ctx)
    assert (s["port"], s["temperature_c"], s["bias_ma"]) == ("xe-0/1/7", 36.0, [37.682])
    json_body = (TEST_DATA / "real" / "junos_show_interfaces_display_json_vqfx10000_17.4R1.txt").read_bytes()
    out = adapters.parse(
        "junos", b"{master:0}\n" + json_body, adapters.Context(device="q", port=None, ts=NOW)
    )
    assert sum(1 for x in out if "fec_corrected_codewords" in x) == 12


def test_line_marks_never_let_leading_whitespace_run_across_lines():
    r"""``(?m)^\s*X`` lets ``\s*`` run over every following blank line before failing at X, at
    each line start: quadratic in the body. 64 KiB of "\n " took about 54 s of CPU in the format
    sniff (and the Junos block split read the whole body so); line indentation is ``[ \t]*``."""
    from inventory.core.telemetry.adapters import junos, sniff

    patterns = [marks.pattern for _, marks in sniff.SIGNATURES.values()] + [junos._BLOCK.pattern.encode()]
    assert [p for p in patterns if rb"^\s*" in p] == []
