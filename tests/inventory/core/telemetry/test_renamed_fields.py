"""Property (issue 30): for every adapter, an input whose recognised fields are renamed or removed
is never an empty or partial sample accepted without an error or an ``ignored`` report.

Each adapter gets a capture (real where one exists: tests/data/real, tests/data/telemetry) and
the source names it reads. Hypothesis renames some of them (a device release spelling a name
differently), one at a time and together. Then, compared with the untouched capture:

* a sample that lost a field it had is allowed only when the body is refused (``AdapterError``),
  the item is refused (``no_data`` and the like), or ``ignored`` names every renamed field;
* no empty sample is ever accepted;
* with every recognised name removed, nothing is accepted: a refusal or an item error.

Removing only some lines yields a smaller sample and nothing more: a device that does not report
a counter is ordinary (an older firmware without ``rx_corrected_bits_phy``), and no output says
which of its lines a device left out, so there is nothing to name.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.core.telemetry import adapters
from inventory.core.telemetry.decode import decode_objects
from tests.paths import TEST_DATA

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
REAL = TEST_DATA / "real"
SHARED = TEST_DATA / "telemetry"

MLX5_STATS = b"""NIC statistics:
     rx_corrected_bits_phy: 12345
     link_down_events_phy: 2
     rx_prio3_pause: 7
     tx_prio3_pause: 1
     rx_prio3_pause_duration: 900
     rx_fec_uncorrectable_blocks_phy: 4
"""
NODE_EXPORTER = b"""node_ethtool_rx_corrected_bits_phy{device="eth1"} 12345
node_ethtool_link_down_events_phy{device="eth1"} 3
node_ethtool_rx_prio3_pause{device="eth1"} 42
"""

# format (or "format#form" for a second input form) -> (body, ?port=, the source names it reads)
# Hand-written (no real multi-lane reply with a usable licence): Junos' per-lane optics blocks
# with two lanes of the real QSFP28 text capture (et-0/0/0), in the order a device may send them.
JUNOS_LANES_XML = b"""<rpc-reply><interface-information><physical-interface>
<name>et-0/0/0</name>
<optics-diagnostics>
<module-temperature>48 degrees C / 119 degrees F</module-temperature>
<module-voltage>3.3340</module-voltage>
<optics-diagnostics-lane-values>
<lane-index>1</lane-index>
<laser-bias-current>132.255</laser-bias-current>
<laser-output-power-dbm>0.96</laser-output-power-dbm>
<laser-rx-optical-power-dbm>0.72</laser-rx-optical-power-dbm>
<laser-rx-power-low-warn>Off</laser-rx-power-low-warn>
</optics-diagnostics-lane-values>
<optics-diagnostics-lane-values>
<lane-index>0</lane-index>
<laser-bias-current>132.255</laser-bias-current>
<laser-output-power-dbm>1.30</laser-output-power-dbm>
<laser-rx-optical-power-dbm>1.03</laser-rx-optical-power-dbm>
<laser-rx-power-low-warn>On</laser-rx-power-low-warn>
</optics-diagnostics-lane-values>
</optics-diagnostics>
</physical-interface></interface-information></rpc-reply>
"""

# Hand-written from the element names (no real reply with a usable licence): Junos EVO's pre-FEC
# BER and FEC histogram bins in ``show interfaces extensive | display xml``.
JUNOS_EVO_FEC_XML = b"""<rpc-reply><interface-information><physical-interface>
<name>et-0/0/56</name>
<ethernet-fec-statistics>
<pre-fec-ber>2.0625000318741e-10</pre-fec-ber>
</ethernet-fec-statistics>
<ethernet-fechistogram-statistics>
<bin-num>0</bin-num>
<sym-live-err>12</sym-live-err>
<sym-harvest-err>123456789</sym-harvest-err>
</ethernet-fechistogram-statistics>
<ethernet-fechistogram-statistics>
<bin-num>1</bin-num>
<sym-live-err>3</sym-live-err>
<sym-harvest-err>940</sym-harvest-err>
</ethernet-fechistogram-statistics>
</physical-interface></interface-information></rpc-reply>
"""

CASES: dict[str, tuple[bytes, str | None, tuple[str, ...]]] = {
    "ethtool-fec": (
        (SHARED / "01_ethtool_show-fec_stats.txt").read_bytes(),
        None,
        ("corrected_blocks", "uncorrectable_blocks"),
    ),
    "ethtool-stats": (
        MLX5_STATS,
        "p1",
        (
            "rx_corrected_bits_phy",
            "link_down_events_phy",
            "rx_prio3_pause",
            "tx_prio3_pause",
            "rx_fec_uncorrectable_blocks_phy",
        ),
    ),
    "ethtool-module": (
        (SHARED / "19_ethtool_m_qsfp28_sr4_mellanox_cumulus.txt").read_bytes(),
        "p1",
        (
            "Vendor SN",
            "Vendor name",
            "Vendor PN",
            "Module temperature",
            "Module voltage",
            "Laser tx bias current",
            "Transmit avg optical power",
            "Rcvr signal avg",
            "Laser rx power low",
        ),
    ),
    "mlxlink": (
        (SHARED / "06_mlxlink_400g_dr4_cx7_mft4.34.json").read_bytes(),
        "p1",
        (
            "Temperature [C]",
            "Voltage [mV]",
            "Raw Physical BER",
            "Effective Physical BER",
            "Vendor Serial Number",
        ),
    ),
    "perfquery": (
        (SHARED / "10_perfquery_extended_hca_2port.txt").read_bytes(),
        None,
        ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter"),
    ),
    "sonic-counters": (
        (SHARED / "18_sonic_redis_RATES_fec_ber.txt").read_bytes(),
        None,
        ("SAI_PORT_STAT_IF_FEC_CORRECTED_BITS", "FEC_PRE_BER", "FEC_POST_BER"),
    ),
    "sonic-cli": (
        (SHARED / "15_sonic_fec-stats_pre_post_ber_max.txt").read_bytes(),
        None,
        ("FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR", "FEC_PRE_BER", "FEC_POST_BER"),
    ),
    "gnmi": (
        (SHARED / "13_sonic_gnmi_get_COUNTERS_Ethernet0.json").read_bytes(),
        None,
        (
            "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES",
            "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS",
            "SAI_PORT_STAT_PFC_3_RX_PKTS",
        ),
    ),
    "prometheus": (NODE_EXPORTER, None, ("rx_corrected_bits_phy", "link_down_events_phy", "rx_prio3_pause")),
    "xena": ((SHARED / "20_xena_pp_rxfecstats.txt").read_bytes(), "p1", ("PP_RXFECSTATS",)),
    "sonic-dom": (
        (REAL / "sonic_eeprom_dom_qsfp28_aoc_Ethernet0.txt").read_bytes(),
        None,
        ("RX1Power", "RX3Power", "TX2Bias", "Temperature", "Vcc", "Vendor SN", "RxPowerLowWarning"),
    ),
    "junos": (
        (REAL / "junos_show_interfaces_diagnostics_optics_et_qsfp28_4lanes.txt").read_bytes(),
        None,
        (
            "Laser bias current",
            "Laser output power",
            "Laser receiver power",
            "Module temperature",
            "Module voltage",
            "Laser rx power low",
        ),
    ),
    "arista-eos": (
        (REAL / "arista_eos_show_interfaces_transceiver_detail.txt").read_bytes(),
        None,
        ("Temperature", "Voltage", "Current", "Tx Power", "Rx Power"),
    ),
    "arista-eos#json": (
        (REAL / "arista_eos_show_interfaces_transceiver_napalm_40gbase-sr4.json").read_bytes(),
        None,
        ("temperature", "voltage", "txBias", "txPower", "rxPower", "vendorSn"),
    ),
    "arista-eos#phy": (
        (REAL / "arista_eos_show_interfaces_phy_detail_7050cx3_eos4.35.json").read_bytes(),
        None,
        ("correctedCodewords", "uncorrectedCodewords", "correctedSymbols", "operSpeed"),
    ),
    "arista-eos#detail": (
        (REAL / "arista_eos_show_interfaces_transceiver_detail_7050cx3_eos4.35.json").read_bytes(),
        None,
        ("highAlarm", "lowWarn", "txBias", "rxPower", "temperature"),
    ),
    "junos#json": (
        (REAL / "junos_show_interfaces_display_json_vqfx10000_17.4R1.txt").read_bytes(),
        None,
        ("fec_ccw_count", "fec_nccw_count", "ethernet-fec-statistics"),
    ),
    "junos#evo": (
        JUNOS_EVO_FEC_XML,
        None,
        ("pre-fec-ber", "bin-num", "sym-live-err", "sym-harvest-err"),
    ),
    "junos#lanes": (
        JUNOS_LANES_XML,
        None,
        (
            "lane-index",
            "laser-bias-current",
            "laser-output-power-dbm",
            "laser-rx-optical-power-dbm",
            "laser-rx-power-low-warn",
        ),
    ),
    "junos#xml": (
        (REAL / "junos_get-interface-optics-diagnostics-information_xe_sfp_napalm.xml").read_bytes(),
        None,
        (
            "laser-bias-current",
            "laser-output-power-dbm",
            "rx-signal-avg-optical-power-dbm",
            "module-temperature",
            "module-voltage",
            "laser-rx-power-low-warn-threshold-dbm",
        ),
    ),
}


def test_every_adapter_has_a_case():
    assert {k.split("#")[0] for k in CASES} | {"openconfig"} == set(adapters.FORMATS)


def _read(fmt: str, body: bytes, port: str | None):
    ctx = adapters.Context(device="host-a", port=port, ts=NOW)
    try:
        objs = adapters.parse(fmt, body, ctx)
    except adapters.AdapterError:
        return None, None, ctx
    decoded = decode_objects(objs, now=NOW, max_future=timedelta(minutes=5))
    return objs, decoded, ctx


def _fields(sample: dict) -> set[str]:
    return {k for k in sample if k not in ("device", "port", "ts")}


def _rename(body: bytes, token: str) -> bytes:
    # a device spelling the name differently: "RX1Power" -> "RX1Power_v2"
    return body.replace(token.encode(), token.encode() + b"_v2")


def _remove(body: bytes, token: str) -> bytes:
    return b"\n".join(line for line in body.split(b"\n") if token.encode() not in line)


def _lost(objs0: list[dict], objs: list[dict]) -> bool:
    before = {(s["port"], s["ts"]): _fields(s) for s in objs0}
    return len(objs) < len(objs0) or any(before.get((s["port"], s["ts"]), set()) - _fields(s) for s in objs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), case=st.sampled_from(sorted(CASES)))
def test_renamed_fields_are_never_a_silent_partial_sample(data, case):
    body, port, tokens = CASES[case]
    fmt = case.split("#")[0]
    renamed = data.draw(st.sets(st.sampled_from(tokens), min_size=1, max_size=len(tokens)), label="renamed")
    objs0, decoded0, _ = _read(fmt, body, port)
    # the untouched capture reads cleanly; its items with no reading at all (a Junos lo0 in
    # show interfaces) are refused one by one, and more refusals below are said out loud
    base = len(decoded0.errors)
    assert objs0 and base == sum(1 for s in objs0 if not _fields(s)) < len(objs0)
    # each name alone: a rename that loses a field is refused or named as ignored
    losing = set()
    for token in renamed:
        objs, decoded, ctx = _read(fmt, _rename(body, token), port)
        if objs is None or len(decoded.errors) > base:
            continue  # refused as a whole, or item by item: said out loud
        assert sum(1 for s in objs if _fields(s)) == len(objs) - base  # never an empty sample accepted
        if _lost(objs0, objs):
            losing.add(token)
            assert f"{token}_v2" in " ".join(ctx.report.ignored), f"{fmt}: {token} renamed, lost, not named"
    # all of them at once: every name whose rename loses a field is named
    mutated = body
    for token in renamed:
        mutated = _rename(mutated, token)
    objs, decoded, ctx = _read(fmt, mutated, port)
    if objs is None or len(decoded.errors) > base:
        return
    assert sum(1 for s in objs if _fields(s)) == len(objs) - base
    named = " ".join(ctx.report.ignored)
    assert not [t for t in losing if f"{t}_v2" not in named], fmt


# where CASES lists a sample of the names read, every name (a common part of them) for removal
ALL = {
    "gnmi": ("SAI_PORT_STAT_IF_IN_FEC", "SAI_PORT_STAT_PFC_"),
    "sonic-counters": ("FEC",),
    "sonic-dom": ("RX", "TX", "Rx", "Tx", "Temp", "Vcc", "Vendor"),
    "ethtool-module": ("Vendor", "Module", "Laser", "Transmit", "Rcvr"),
    "junos": ("Laser", "Module"),
    "junos#json": ("fec_",),
    "junos#xml": ("laser-", "module-", "rx-signal"),
    "junos#lanes": ("laser-", "module-", "lane-index"),
    "junos#evo": ("pre-fec-ber", "bin-num", "sym-"),
}


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(sorted(CASES)))
def test_with_every_recognised_name_removed_nothing_is_accepted(fmt):
    body, port, tokens = CASES[fmt]
    tokens = ALL.get(fmt, tokens)
    for token in tokens:
        body = _remove(body, token)
    # the adapter's name, not the case's ("junos#xml" is no format: it would be refused unread)
    objs, decoded, _ = _read(fmt.split("#")[0], body, port)
    assert objs is None or (decoded.errors and not decoded.samples) or not objs, (fmt, objs)
