"""Real captures (tests/data/real, sources in its README) posted through POST /api/telemetry/:
every value the product stores is the value the file carries, field by field and lane by lane;
what it does not store is named in ``ignored``; a period output is refused and stores nothing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import Device, PortTelemetryState, TelemetryLaneSample, TelemetrySample
from tests import factories as f
from tests.paths import TEST_DATA

pytestmark = pytest.mark.django_db

REAL = TEST_DATA / "real"
PORTS = ("Ethernet0", "Ethernet4", "Ethernet8", "Ethernet9")


@pytest.fixture
def leaf():
    dev = Device.objects.create(name="leaf-1", role="leaf")
    return {name: f.port(dev, name) for name in PORTS}


@pytest.fixture
def post(user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    ts = (timezone.now() - timedelta(minutes=1)).replace(microsecond=0)

    def _post(name: str, fmt: str, port: str | None = None, ctype: str = "text/plain"):
        query = f"?format={fmt}&device=leaf-1&ts={ts.isoformat().replace('+00:00', 'Z')}"
        if port:
            query += f"&port={port}"
        return client.post("/api/telemetry/" + query, data=(REAL / name).read_bytes(), content_type=ctype)

    return _post


def approx(values):
    return pytest.approx(values, rel=1e-6)


def thresholds(**by_quantity):
    """{"rx_power": (high alarm, high warn, low alarm, low warn), ...} -> module_thresholds keys."""
    out = {}
    for quantity, values in by_quantity.items():
        for level, value in zip(("high_alarm", "high_warn", "low_alarm", "low_warn"), values, strict=True):
            out[f"{quantity}_{level}"] = approx(value)
    return out


SONIC_QSFP28_THRESHOLDS = thresholds(
    rx_power=(3.4001, 2.4, -13.5067, -9.5001),
    bias=(10.0, 9.5, 0.5, 1.0),
    temperature=(75.0, 70.0, -5.0, 0.0),
    voltage=(3.63, 3.465, 2.97, 3.1349),
)


def _stored(port):
    sample = TelemetrySample.objects.get(port=port)
    lanes = TelemetryLaneSample.objects.get(port=port)
    state = PortTelemetryState.objects.get(port=port)
    return sample, lanes, state


def test_sonic_eeprom_dom_qsfp28_aoc(leaf, post):
    r = post("sonic_eeprom_dom_qsfp28_aoc_Ethernet0.txt", "sonic-dom")
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["stored"], body["rejected"]) == (1, 0), body["errors"]
    sample, lanes, state = _stored(leaf["Ethernet0"])
    assert sample.temperature_c == approx(30.9258)
    assert sample.voltage_v == approx(3.2824)
    assert lanes.rx_power_dbm == approx([0.3802, -0.4871, -0.0860, 0.3830])
    assert lanes.bias_ma == approx([6.75, 6.75, 6.75, 6.75])
    assert lanes.tx_power_dbm is None  # the file has no TXnPower line
    assert (state.module_vendor, state.module_part, state.module_serial) == (
        "Mellanox",
        "MFA1A00-C003",
        "MT1706FT02064",
    )
    assert state.rx_power_low_warn_dbm == approx(-9.5001)
    assert state.rx_power_low_alarm_dbm == approx(-13.5067)
    assert state.temperature_high_warn_c == approx(70.0)
    # every threshold the module reports is its own judgement, kept; flags: none in this output
    assert state.module_thresholds == SONIC_QSFP28_THRESHOLDS
    assert state.module_flags == {} and state.dom_suspect is None
    # the identity lines no sample field takes are named, not dropped in silence
    ignored = body["ignored"]["fields"]
    for name in ("Vendor OUI", "Identifier", "Encoding", "Vendor Rev"):
        assert ignored[name] == 1, name
    assert (
        "RX1Power" not in ignored and "TempHighWarning" not in ignored and "RxPowerHighAlarm" not in ignored
    )
    assert body["ignored"]["count"] == sum(ignored.values())


def test_sonic_eeprom_dom_qsfpdd_eight_lanes(leaf, post):
    r = post("sonic_eeprom_dom_qsfpdd_400zr_Ethernet8.txt", "sonic-dom")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample, lanes, state = _stored(leaf["Ethernet8"])
    assert sample.temperature_c == approx(44.9883)
    assert sample.voltage_v == approx(3.2999)
    assert lanes.rx_power_dbm == approx([-3.8595, 8.1478, -22.9243, 1.175, 1.2421, 8.1489, -3.5962, -3.6131])
    assert lanes.tx_power_dbm == approx([1.175] * 8)
    assert lanes.bias_ma == approx([17.476, 17.476, 0.0, 0.0, 0.0, 8.224, 8.224, 8.224])
    assert (state.module_vendor, state.module_part, state.module_serial) == (
        "INNOLIGHT",
        "C-DQ8FNM010-N00",
        "INKAO2900002A",
    )
    assert state.rx_power_low_warn_dbm == approx(-8.9008)
    assert state.rx_power_low_alarm_dbm == approx(-11.9044)
    assert state.temperature_high_warn_c == approx(75.0)
    assert state.module_thresholds == thresholds(
        rx_power=(6.9999, 4.9999, -11.9044, -8.9008),
        bias=(14.996, 12.998, 4.496, 5.0),
        tx_power=(6.9999, 4.9999, -10.5012, -7.5007),
        temperature=(80.0, 75.0, -10.0, -5.0),
        voltage=(3.6352, 3.4672, 2.9696, 3.1304),
    )
    ignored = r.json()["ignored"]["fields"]
    assert {"Requested Laser Frequency", "Tx Frequency", "Requested Tx Power", "CMIS Rev"} <= set(ignored)


def test_sonic_state_db_dom_hashes(leaf, post):
    r = post("sonic_state_db_transceiver_Ethernet0.json", "sonic-dom", ctype="application/json")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample, lanes, state = _stored(leaf["Ethernet0"])
    # the same module as the CLI capture: the same values from xcvrd's own field names
    assert sample.temperature_c == approx(30.9258)
    assert sample.voltage_v == approx(3.2824)
    assert lanes.rx_power_dbm == approx([0.3802, -0.4871, -0.0860, 0.3830])
    assert lanes.bias_ma == approx([6.75] * 4)
    assert lanes.tx_power_dbm is None  # tx1power..tx4power are N/A
    assert (state.module_vendor, state.module_part, state.module_serial) == (
        "Mellanox",
        "MFA1A00-C003",
        "MT1706FT02064",
    )
    assert state.rx_power_low_warn_dbm == approx(-9.5001)
    assert state.rx_power_low_alarm_dbm == approx(-13.5067)
    assert state.temperature_high_warn_c == approx(70.0)
    assert state.module_thresholds == SONIC_QSFP28_THRESHOLDS  # the CLI's values, from xcvrd's names
    ignored = r.json()["ignored"]["fields"]
    assert {"vendor_oui", "type", "connector"} <= set(ignored)
    assert "rxpowerhighalarm" not in ignored
    assert "rx1power" not in ignored and "tx1power" not in ignored  # read (N/A is no value, not ignored)


def test_sonic_counters_pfc_estimated_pause_duration(leaf, post):
    r = post(
        "sonic_counters_db_pfc_est_oid0x1000000000012.json",
        "sonic-counters",
        port="Ethernet0",
        ctype="application/json",
    )
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample = TelemetrySample.objects.get(port=leaf["Ethernet0"])
    # SAI_PORT_STAT_PFC_0..7_RX_PKTS: 1200 + 201 + ... + 207; TX: 1210 + 211 + ... + 217
    assert sample.pfc_pause_rx == 1200 + sum(range(201, 208))
    assert sample.pfc_pause_tx == 1210 + sum(range(211, 218))
    # EST_PORT_STAT_PFC_0..7_RX_PAUSE_DURATION_US: 12000000 + 20000001 + ... + 20000007
    assert sample.pfc_pause_duration_us == 12_000_000 + sum(20_000_000 + i for i in range(1, 8))
    ignored = r.json()["ignored"]["fields"]
    assert ignored["EST_PORT_STAT_PFC_3_ON2OFF_RX_PKTS"] == 1
    assert ignored["EST_PORT_STAT_PFC_3_RECENT_PAUSE_TIME_US"] == 1
    assert ignored["SAI_PORT_STAT_IF_IN_OCTETS"] == 1


def test_sonic_fec_stats_period_output_is_refused_and_stores_nothing(leaf, post):
    r = post("sonic_fec-stats_period_3s.txt", "sonic-cli")
    assert r.status_code == 400
    assert "period" in r.json()["detail"] and "without -p" in r.json()["detail"]
    assert not TelemetrySample.objects.exists()


def test_a_dom_capture_posted_as_ethtool_module_is_refused_naming_its_format(leaf, post):
    """Before: accepted as ethtool -m with vendor, part and serial, every lane dropped in silence."""
    r = post("sonic_eeprom_dom_qsfp28_aoc_Ethernet0.txt", "ethtool-module", port="Ethernet0")
    assert r.status_code == 400
    assert "SONiC transceiver DOM output" in r.json()["detail"]
    assert "?format=sonic-dom" in r.json()["detail"]
    assert not TelemetrySample.objects.exists()
    assert not PortTelemetryState.objects.exists()


@pytest.fixture
def junos_leaf():
    dev = Device.objects.create(name="qfx-1", role="leaf")
    return {name: f.port(dev, name) for name in ("xe-0/1/7", "et-0/0/0", "ge-0/0/0")}


def _post_as(user_with_role, name, fmt, device, ctype="text/plain"):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    ts = (timezone.now() - timedelta(minutes=1)).replace(microsecond=0)
    query = f"?format={fmt}&device={device}&ts={ts.isoformat().replace('+00:00', 'Z')}"
    return client.post("/api/telemetry/" + query, data=(REAL / name).read_bytes(), content_type=ctype)


def test_junos_diagnostics_optics_sfp(junos_leaf, user_with_role):
    r = _post_as(user_with_role, "junos_show_interfaces_diagnostics_optics_xe_sfp.txt", "junos", "qfx-1")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample, lanes, state = _stored(junos_leaf["xe-0/1/7"])
    assert sample.temperature_c == approx(36.0)
    assert sample.voltage_v == approx(3.268)
    assert lanes.bias_ma == approx([37.682])
    assert lanes.tx_power_dbm == approx([-1.83])
    assert lanes.rx_power_dbm == approx([-2.32])
    assert state.rx_power_low_warn_dbm == approx(-14.40)
    assert state.rx_power_low_alarm_dbm == approx(-17.40)
    assert state.temperature_high_warn_c == approx(85.0)
    assert state.module_thresholds == thresholds(
        bias=(95.0, 90.0, 3.0, 5.0),
        tx_power=(3.50, 0.50, -11.25, -8.21),
        temperature=(88.0, 85.0, -3.0, 0.0),
        voltage=(3.630, 3.465, 2.970, 3.135),
        rx_power=(3.50, 0.50, -17.40, -14.40),
    )
    # all 20 flags, each Off as the module reports it
    assert state.module_flags == {
        f"{q}_{lvl}": False
        for q in ("bias", "tx_power", "temperature", "voltage", "rx_power")
        for lvl in ("high_alarm", "low_alarm", "high_warn", "low_warn")
    }
    assert state.dom_suspect is None


def test_junos_diagnostics_optics_qsfp28_four_lanes(junos_leaf, user_with_role):
    r = _post_as(
        user_with_role, "junos_show_interfaces_diagnostics_optics_et_qsfp28_4lanes.txt", "junos", "qfx-1"
    )
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample, lanes, state = _stored(junos_leaf["et-0/0/0"])
    assert sample.temperature_c == approx(48.0)
    assert sample.voltage_v == approx(3.334)
    assert lanes.bias_ma == approx([132.255] * 4)
    assert lanes.tx_power_dbm == approx([1.30, 0.96, 1.01, 1.56])
    assert lanes.rx_power_dbm == approx([1.03, 0.72, 0.97, 1.36])
    assert state.rx_power_low_warn_dbm == approx(-10.60)
    assert state.rx_power_low_alarm_dbm == approx(-13.60)
    assert state.temperature_high_warn_c == approx(70.0)
    assert state.module_thresholds == thresholds(
        temperature=(74.0, 70.0, -4.0, 0.0),
        voltage=(3.549, 3.45, 3.049, 3.15),
        bias=(175.0, 162.5, 75.0, 87.5),
        tx_power=(4.50, 4.00, -4.31, -3.81),
        rx_power=(5.50, 4.50, -13.60, -10.60),
    )
    assert len(state.module_flags) == 20 and not any(state.module_flags.values())
    ignored = r.json()["ignored"]["fields"]
    assert ignored["Laser temperature"] == 4  # per lane, no sample field
    assert ignored["Rx loss of signal alarm"] == 5  # module and 4 lanes
    assert ignored["Laser temperature high alarm threshold"] == 1


def test_junos_extensive_fec_counters_and_rates_kept_apart(junos_leaf, user_with_role):
    r = _post_as(user_with_role, "junos_show_interfaces_extensive_ge_vmx.txt", "junos", "qfx-1")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample = TelemetrySample.objects.get(port=junos_leaf["ge-0/0/0"])
    assert (sample.fec_corrected_cw, sample.fec_uncorrectable_cw) == (0, 0)
    ignored = r.json()["ignored"]["fields"]
    # per-second rates are never read as counters
    assert ignored["FEC Corrected Errors Rate"] == 1 and ignored["FEC Uncorrected Errors Rate"] == 1
    assert "FEC Corrected Errors" not in ignored


def test_arista_eos_transceiver_detail(user_with_role):
    dev = Device.objects.create(name="eos-1", role="leaf")
    names = (
        [f"Ethernet6/{i}" for i in range(1, 5)] + [f"Ethernet29/{i}" for i in range(1, 5)] + ["Ethernet7/1"]
    )
    ports = {name: f.port(dev, name) for name in names}
    r = _post_as(user_with_role, "arista_eos_show_interfaces_transceiver_detail.txt", "arista-eos", "eos-1")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (9, 0)
    tx = {"Ethernet6/1": -2.39, "Ethernet6/2": -2.33, "Ethernet6/3": -0.78, "Ethernet6/4": -0.93}
    rx = {"Ethernet6/1": -0.90, "Ethernet6/2": -0.94, "Ethernet6/3": -1.00, "Ethernet6/4": -0.83}
    for name in tx:
        sample, lanes, state = _stored(ports[name])
        assert (sample.temperature_c, sample.voltage_v) == (approx(27.48), approx(3.30))
        assert lanes.tx_power_dbm == approx([tx[name]]) and lanes.rx_power_dbm == approx([rx[name]])
        assert lanes.bias_ma is None
        assert (state.rx_power_low_warn_dbm, state.rx_power_low_alarm_dbm) == (approx(-10.5), approx(-11.5))
        assert state.temperature_high_warn_c == approx(75.0)
        assert state.module_thresholds == thresholds(
            temperature=(80.0, 75.0, -5.0, 0.0),
            voltage=(3.60, 3.50, 3.00, 3.10),
            tx_power=(4.40, 3.40, -9.60, -8.60),
            rx_power=(4.40, 3.40, -11.50, -10.50),
        )
    for i in range(1, 5):
        lanes = TelemetryLaneSample.objects.get(port=ports[f"Ethernet29/{i}"])
        assert lanes.bias_ma == approx([21.90]) and lanes.rx_power_dbm is None
    assert TelemetryLaneSample.objects.get(port=ports["Ethernet7/1"]).rx_power_dbm == approx([-1.15])
    assert PortTelemetryState.objects.get(port=ports["Ethernet29/1"]).module_thresholds == thresholds(
        bias=(38.30, 37.35, 0.0, 0.0)
    )
    assert r.json()["ignored"] == {"count": 0, "fields": {}}


def test_arista_output_with_a_line_the_template_does_not_know_is_refused(user_with_role):
    Device.objects.create(name="eos-1", role="leaf")
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    body = (REAL / "arista_eos_show_interfaces_transceiver_detail.txt").read_bytes() + b"Et9/1  oops\n"
    r = client.post("/api/telemetry/?format=arista-eos&device=eos-1", data=body, content_type="text/plain")
    assert r.status_code == 400 and "LINE NOT FOUND" in r.json()["detail"]
    assert not TelemetrySample.objects.exists()


def test_arista_eos_transceiver_json_napalm_capture(user_with_role):
    """napalm's EOS get_optics fixture: ``show interfaces transceiver | json`` on three lanes of a
    40GBASE-SR4 breakout, every reading stored exactly as EOS printed it (full float precision)."""
    dev = Device.objects.create(name="eos-1", role="leaf")
    ports = {name: f.port(dev, name) for name in ("Ethernet3/1/1", "Ethernet3/1/2", "Ethernet3/1/3")}
    r = _post_as(
        user_with_role,
        "arista_eos_show_interfaces_transceiver_napalm_40gbase-sr4.json",
        "arista-eos",
        "eos-1",
        ctype="application/json",
    )
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (3, 0)
    expected = {
        "Ethernet3/1/1": (-1.8025870272698974, -0.9103269958161198, 6.306),
        "Ethernet3/1/2": (-2.287800980504664, -0.70785496262606, 6.496),
        "Ethernet3/1/3": (-2.5034096790510008, -0.7494587968815747, 6.562),
    }
    for name, (rx, tx, bias) in expected.items():
        sample, lanes, state = _stored(ports[name])
        assert sample.temperature_c == approx(35.26171875)
        assert sample.voltage_v == approx(3.2731000000000003)
        assert lanes.rx_power_dbm == approx([rx])
        assert lanes.tx_power_dbm == approx([tx])
        assert lanes.bias_ma == approx([bias])
        assert state.module_serial == "XMD1401000RP"
        assert state.dom_suspect is None
    # what EOS printed and cabletrack does not store, named
    assert r.json()["ignored"] == {"count": 6, "fields": {"mediaType": 3, "updateTime": 3}}


def test_arista_json_posted_as_another_format_is_refused_naming_arista(user_with_role):
    Device.objects.create(name="eos-1", role="leaf")
    r = _post_as(
        user_with_role,
        "arista_eos_show_interfaces_transceiver_napalm_40gbase-sr4.json",
        "sonic-dom",
        "eos-1",
        ctype="application/json",
    )
    assert r.status_code == 400 and "Arista EOS" in r.json()["detail"], r.content
    assert "?format=arista-eos" in r.json()["detail"]
    assert not TelemetrySample.objects.exists()


def test_arista_json_without_interfaces_is_refused(user_with_role):
    Device.objects.create(name="eos-1", role="leaf")
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    r = client.post(
        "/api/telemetry/?format=arista-eos&device=eos-1",
        data=b'{"interface": {"Ethernet1": {"txBias": 6.3}}}',
        content_type="application/json",
    )
    assert r.status_code == 400 and '"interfaces"' in r.json()["detail"], r.content
    assert not TelemetrySample.objects.exists()


JUNOS_XML = "junos_get-interface-optics-diagnostics-information_xe_sfp_napalm.xml"


def test_junos_optics_xml_rpc_reply(junos_leaf, user_with_role):
    """napalm's Junos get_optics fixture: the get-interface-optics-diagnostics-information reply of
    an SFP+ port, every reading, threshold and flag stored as the XML carries it."""
    port = f.port(Device.objects.get(name="qfx-1"), "xe-0/0/0")
    r = _post_as(user_with_role, JUNOS_XML, "junos", "qfx-1", ctype="application/xml")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    sample, lanes, state = _stored(port)
    assert sample.temperature_c == approx(45.0)
    assert sample.voltage_v == approx(3.315)
    assert lanes.bias_ma == approx([44.298])
    assert lanes.tx_power_dbm == approx([-1.35])
    assert lanes.rx_power_dbm == approx([-3.42])
    assert (state.rx_power_low_warn_dbm, state.rx_power_low_alarm_dbm) == (approx(-18.01), approx(-20.00))
    assert state.temperature_high_warn_c == approx(73.0)
    assert state.module_thresholds == thresholds(
        bias=(85.0, 80.0, 15.0, 20.0),
        tx_power=(2.00, 1.00, -8.01, -7.01),
        temperature=(78.0, 73.0, -13.0, -8.0),
        voltage=(3.700, 3.600, 2.900, 3.000),
        rx_power=(2.50, 2.00, -20.00, -18.01),
    )
    assert state.module_flags == {
        f"{q}_{lvl}": False
        for q in ("bias", "tx_power", "temperature", "voltage", "rx_power")
        for lvl in ("high_alarm", "low_alarm", "high_warn", "low_warn")
    }
    assert state.dom_suspect is None
    # the mW duplicates of what is stored in dBm, named
    ignored = r.json()["ignored"]
    assert ignored["count"] == 10
    assert (
        ignored["fields"]["laser-output-power"] == 1 and ignored["fields"]["rx-signal-avg-optical-power"] == 1
    )


def test_junos_xml_posted_as_another_format_is_refused_naming_junos(junos_leaf, user_with_role):
    r = _post_as(user_with_role, JUNOS_XML, "ethtool-module", "qfx-1", ctype="application/xml")
    assert r.status_code == 400 and "?format=junos" in r.json()["detail"], r.content
    assert not TelemetrySample.objects.exists()


def test_junos_xml_with_an_entity_declaration_is_refused(junos_leaf, user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    body = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>' + (REAL / JUNOS_XML).read_bytes()
    r = client.post("/api/telemetry/?format=junos&device=qfx-1", data=body, content_type="application/xml")
    assert r.status_code == 400 and "entity" in r.json()["detail"], r.content
    assert not TelemetrySample.objects.exists()


JUNOS_MX_XML = "junos_interface_optics_xml_mx_21.2_8ports_centreon.xml"
_XML_LEAF = re.compile(r'<([a-z-]+)(?: junos:celsius="([^"]*)")?>\s*([^<]*?)\s*</\1>')


def _mx_ports() -> dict[str, dict[str, str]]:
    """The capture's leaves per port as the file writes them: name -> {element: its value}, a
    temperature by its ``junos:celsius`` attribute (the text rounds it to whole degrees)."""
    out = {}
    for block in (REAL / JUNOS_MX_XML).read_text().split("<physical-interface>")[1:]:
        leaves = {tag: celsius or text for tag, celsius, text in _XML_LEAF.findall(block)}
        out[leaves.pop("name")] = leaves
    return out


def test_junos_optics_xml_of_an_mx_without_its_rpc_reply(user_with_role):
    """centreon-plugins' Junos NETCONF capture of an MX (Junos 21.2, eight SFP/SFP+ ports): the
    interface-information element without the rpc-reply around it, so ``junos:celsius`` and
    ``junos:style`` use a prefix the file never declares (it was refused as "not well-formed").
    Every port's readings, 20 thresholds and 20 flags are stored as the file carries them, the
    temperature to its tenth (41.1 C, where the text says "41 degrees C")."""
    leaves = _mx_ports()
    assert list(leaves) == [
        "ge-0/2/2",
        "ge-0/2/3",
        "ge-0/2/4",
        "ge-0/2/5",
        "ge-0/3/3",
        *(f"xe-2/0/{i}" for i in range(3)),
    ]
    assert (
        leaves["ge-0/2/3"]["module-temperature"],
        leaves["ge-0/2/2"]["rx-signal-avg-optical-power-dbm"],
    ) == ("41.1", "-7.24")
    dev = Device.objects.create(name="mx-1", role="spine")
    ports = {name: f.port(dev, name) for name in leaves}
    r = _post_as(user_with_role, JUNOS_MX_XML, "junos", "mx-1", ctype="application/xml")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (8, 0), r.json()["errors"]
    limits = {
        "bias": "laser-bias-current", "tx_power": "laser-tx-power", "rx_power": "laser-rx-power",
        "temperature": "module-temperature", "voltage": "module-voltage",
    }  # fmt: skip
    levels = {
        "high_alarm": "high-alarm",
        "low_alarm": "low-alarm",
        "high_warn": "high-warn",
        "low_warn": "low-warn",
    }
    for name, leaf in leaves.items():
        sample, lanes, state = _stored(ports[name])
        got = (sample.temperature_c, sample.voltage_v, lanes.bias_ma, lanes.tx_power_dbm, lanes.rx_power_dbm)
        assert got == (
            approx(float(leaf["module-temperature"])),
            approx(float(leaf["module-voltage"])),
            approx([float(leaf["laser-bias-current"])]),
            approx([float(leaf["laser-output-power-dbm"])]),
            approx([float(leaf["rx-signal-avg-optical-power-dbm"])]),
        ), name
        dbm = ("tx_power", "rx_power")  # the power thresholds in dBm, not their mW duplicates
        assert state.module_thresholds == {
            f"{q}_{lvl}": approx(float(leaf[f"{el}-{suffix}-threshold{'-dbm' if q in dbm else ''}"]))
            for q, el in limits.items()
            for lvl, suffix in levels.items()
        }, name
        assert state.module_flags == {
            f"{q}_{lvl}": leaf[f"{el}-{suffix}"] == "on"
            for q, el in limits.items()
            for lvl, suffix in levels.items()
        }, name
        assert state.rx_power_low_alarm_dbm == approx(float(leaf["laser-rx-power-low-alarm-threshold-dbm"]))
        assert state.dom_suspect is None
    assert not any(
        flag
        for leaf in leaves.values()
        for k, flag in leaf.items()
        if k.endswith(("-alarm", "-warn")) and flag != "off"
    )
    # the mW duplicates of the ten powers stored in dBm, named for each of the eight ports
    mw = ["laser-output-power", "rx-signal-avg-optical-power"] + [
        f"laser-{d}-power-{suffix}-threshold" for d in ("tx", "rx") for suffix in levels.values()
    ]
    assert r.json()["ignored"] == {"count": 80, "fields": dict.fromkeys(sorted(mw), 8)}


JUNOS_MX_EXTENSIVE = "junos_interface_information_extensive_xml_mx_21.2_centreon.xml"


def test_junos_interface_information_xml_of_an_mx_fec_counts(user_with_role):
    """centreon-plugins' NETCONF capture of ``show interfaces extensive`` on the same MX: 150
    physical interfaces in ``interface-information`` XML, the 20 ge- ports with
    ``ethernet-fec-statistics`` (every count 0, as the file says). Each of them is stored; the
    130 others carry no reading and are refused one by one; every element not read is named."""
    tree = ET.parse(REAL / JUNOS_MX_EXTENSIVE)  # noqa: S314 -- the committed capture, no DOCTYPE

    def local(el):
        return el.tag.rsplit("}", 1)[-1]

    phys = [el for el in tree.iter() if local(el) == "physical-interface"]
    fec = {}
    for el in phys:
        stats = [c for c in el if local(c) == "ethernet-fec-statistics"]
        if stats:
            counts = {
                local(c): int(c.text) for c in stats[0] if local(c) in ("fec_ccw_count", "fec_nccw_count")
            }
            fec[next(c for c in el if local(c) == "name").text.strip()] = counts
    assert (len(phys), len(fec)) == (150, 20)
    assert list(fec) == [f"ge-0/{pic}/{n}" for pic in (2, 3) for n in range(10)]
    dev = Device.objects.create(name="mx-1", role="spine")
    ports = {name: f.port(dev, name) for name in fec}
    r = _post_as(user_with_role, JUNOS_MX_EXTENSIVE, "junos", "mx-1", ctype="application/xml")
    assert r.status_code == 200, r.content
    out = r.json()
    assert (out["stored"], out["rejected"]) == (20, 130), out["errors"][:3]
    assert {e["code"] for e in out["errors"]} == {"no_data"} and "no reading" in out["errors"][0]["message"]
    for name, counts in fec.items():
        s = TelemetrySample.objects.get(port=ports[name])
        assert (
            (s.fec_corrected_cw, s.fec_uncorrectable_cw)
            == (counts["fec_ccw_count"], counts["fec_nccw_count"])
            == (0, 0)
        )
    # every element of a physical interface that is not read, and the FEC rates, named
    expected = Counter(
        local(c)
        for el in phys
        for c in el
        if local(c) not in ("name", "optics-diagnostics", "ethernet-fec-statistics")
    )
    expected.update(
        local(c)
        for el in phys
        for stats in el
        if local(stats) == "ethernet-fec-statistics"
        for c in stats
        if local(c) not in ("fec_ccw_count", "fec_nccw_count")
    )
    assert out["ignored"] == {"count": 4_485, "fields": dict(sorted(expected.items()))}
    # the per-second FEC rates are not counters: named, once for each of the 20 ports
    assert (
        out["ignored"]["fields"]["fec_ccw_error_rate"],
        out["ignored"]["fields"]["fec_nccw_error_rate"],
    ) == (20, 20)


JUNOS_JSON = "junos_show_interfaces_display_json_vqfx10000_17.4R1.txt"
# the file's 40 physical interfaces; the 12 xe- ports carry ethernet-fec-statistics, every count "0"
VQFX_FEC_PORTS = [f"xe-0/0/{i}" for i in range(12)]
VQFX_OTHER_PORTS = [
    "gr-0/0/0", "pfe-0/0/0", "pfh-0/0/0", "bme0", "cbp0", "dsc", *[f"em{i}" for i in range(8)],
    "esi", "gre", "ipip", "irb", "jsrv", "lo0", "lsi", "mtun", "pimd", "pime", "pip0", "tap", "vme", "vtep",
]  # fmt: skip


def test_junos_show_interfaces_display_json_fec_counters(user_with_role):
    """batfish/lab-validation's capture of ``show interfaces | display json`` on a vQFX-10000
    (Junos 17.4R1.16), CLI prompt line ``{master:0}`` included: each xe- port's
    ``ethernet-fec-statistics`` stored as its corrected and uncorrected codeword counters, the
    per-second rates and every other element named in ``ignored``, and each interface with no
    reading (lo0, em0, ...) refused by itself. Junos repeats ``eth-switch-error`` in one element:
    read as two elements, not refused."""
    dev = Device.objects.create(name="vqfx-1", role="leaf")
    ports = {name: f.port(dev, name) for name in VQFX_FEC_PORTS + VQFX_OTHER_PORTS}
    text = (REAL / JUNOS_JSON).read_text()
    assert text.count('"fec_ccw_count"') == text.count('"fec_nccw_count"') == 12
    r = _post_as(user_with_role, JUNOS_JSON, "junos", "vqfx-1", ctype="application/json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert (body["stored"], body["rejected"]) == (12, 28)
    assert sorted((e["port"], e["code"]) for e in body["errors"]) == sorted(
        (name, "no_data") for name in VQFX_OTHER_PORTS
    )
    for name in VQFX_FEC_PORTS:
        sample = TelemetrySample.objects.get(port=ports[name])
        assert (sample.fec_corrected_cw, sample.fec_uncorrectable_cw) == (0, 0), name
    assert TelemetrySample.objects.count() == 12
    assert body["ignored"] == {
        "count": 824,
        "fields": {
            "active-alarms": 12,
            "active-defects": 12,
            "admin-status": 40,
            "bpdu-error": 12,
            "current-physical-address": 26,
            "duplex": 12,
            "eth-switch-error": 24,  # twice in each xe- port, as Junos writes it
            "ethernet-fec-mode": 12,
            "ethernet-pcs-statistics": 12,
            "fec_ccw_error_rate": 12,  # per-second rates, never counters
            "fec_nccw_error_rate": 12,
            "hardware-physical-address": 26,
            "if-config-flags": 40,
            "if-device-flags": 40,
            "if-flow-control": 12,
            "if-media-flags": 34,
            "if-media-type": 12,
            "if-type": 26,
            "ifd-specific-config-flags": 28,
            "interface-flapped": 34,
            "interface-transmit-statistics": 12,
            "l2pt-error": 12,
            "ld-pdu-error": 12,
            "link-level-type": 36,
            "link-type": 15,
            "local-index": 40,
            "logical-interface": 23,
            "loopback": 12,
            "mtu": 38,
            "oper-status": 40,
            "physical-interface-cos-information": 12,
            "snmp-index": 40,
            "sonet-mode": 12,
            "source-filtering": 12,
            "speed": 30,
            "traffic-statistics": 40,
        },
    }


def test_junos_json_posted_as_another_format_is_refused_naming_junos(user_with_role):
    r = _post_as(user_with_role, JUNOS_JSON, "arista-eos", "vqfx-1", ctype="application/json")
    assert r.status_code == 400 and "?format=junos" in r.json()["detail"], r.content
    assert not TelemetrySample.objects.exists()


ARISTA_PHY = "arista_eos_show_interfaces_phy_detail_7050cx3_eos4.35.json"
ARISTA_XCVR_DETAIL = "arista_eos_show_interfaces_transceiver_detail_7050cx3_eos4.35.json"


def test_arista_eos_phy_detail_json_fec_counters(user_with_role):
    """arex's capture of ``show interfaces phy detail | json`` on a DCS-7050CX3-32C-R, EOS 4.35.4M:
    a 10G port without FEC (its speed only), a 25G breakout lane with RS-FEC that corrected 5
    and could not correct 3 codewords, a 100G port with four lanes of corrected symbols (0)."""
    dev = Device.objects.create(name="eos-1", role="leaf")
    ports = {name: f.port(dev, name) for name in ("Ethernet1/1", "Ethernet4/1", "Ethernet29/1")}
    r = _post_as(user_with_role, ARISTA_PHY, "arista-eos", "eos-1", ctype="application/json")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (3, 0), r.json()["errors"]
    stored = {
        name: (s.fec_corrected_cw, s.fec_uncorrectable_cw, s.fec_symbol_errors, s.speed_gbps)
        for name, port in ports.items()
        for s in [TelemetrySample.objects.get(port=port)]
    }
    assert stored == {
        "Ethernet1/1": (None, None, None, 10.0),
        "Ethernet4/1": (5, 3, None, 25.0),  # correctedSymbols is {} on a breakout lane: none stored
        "Ethernet29/1": (0, 0, 0, 100.0),
    }
    assert r.json()["ignored"] == {
        "count": 54,
        "fields": {
            # per port: what the PHY says about itself, not a reading cabletrack stores
            "chip": 3,
            "description": 3,
            "interfaceState": 3,
            "interruptCount": 3,
            "macFaults": 3,
            "pcs": 3,
            "phyState": 3,
            "pma": 3,
            "serdes": 3,
            "transceiver": 3,
            # the two ports with RS-FEC
            "fec.alignmentLock": 2,
            "fec.codewordSize": 2,
            "fec.encoding": 2,
            "fec.laneMap": 2,
            "fec.correctedCodewords.changes": 2,
            "fec.correctedCodewords.lastChange": 2,
            "fec.uncorrectedCodewords.changes": 2,
            "fec.uncorrectedCodewords.lastChange": 2,
            "fec.correctedSymbols.changes": 4,  # Ethernet29/1's four lanes
            "fec.correctedSymbols.lastChange": 4,
        },
    }


def test_arista_eos_transceiver_detail_json_thresholds(user_with_role):
    """arex's capture of ``show interfaces transceiver detail | json`` on the same switch: four
    ports (40GBASE-SR4, two lanes of a dark 100GBASE-SR4 at EOS' -30 dBm floor, 40GBASE-LRL4),
    each reading and each of the module's 20 thresholds stored as the file carries it."""
    dev = Device.objects.create(name="eos-1", role="leaf")
    names = ("Ethernet1/1", "Ethernet7/1", "Ethernet7/2", "Ethernet31/1")
    ports = {name: f.port(dev, name) for name in names}
    r = _post_as(user_with_role, ARISTA_XCVR_DETAIL, "arista-eos", "eos-1", ctype="application/json")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (4, 0), r.json()["errors"]
    sr4_100 = thresholds(
        temperature=(80.0, 70.0, -10.0, 0.0),
        voltage=(3.6300000000000003, 3.4650000000000003, 2.97, 3.1350000000000002),
        bias=(11.0, 9.5, 1.0, 2.0),
        tx_power=(5.399914195935072, 2.3999979288687143, -11.402614338028528, -8.401321529074337),
        rx_power=(5.399914195935072, 2.3999979288687143, -13.306831194338884, -10.301183562535002),
    )
    expected = {
        # port: (temperature, voltage, bias, tx, rx, serial, thresholds)
        "Ethernet1/1": (
            35.09765625,
            3.2270000000000003,
            6.546,
            -1.5932943866659102,
            -1.4333151638846502,
            "XXX000ab0002",
            thresholds(
                temperature=(85.0, 70.0, -10.0, 0.0),
                voltage=(3.6, 3.5, 2.9000000000000004, 3.1),
                bias=(15.0, 12.0, 0.0, 2.0),
                tx_power=(4.000023459279557, 2.3999979288687143, -10.599818449923369, -7.599502278873523),
                rx_power=(4.000023459279557, 2.3999979288687143, -18.013429130455776, -15.003129173815964),
            ),
        ),
        "Ethernet7/1": (43.9375, 3.2869, 6.78, 0.29018329546481425, -30.0, "XXX000a`0003", sr4_100),
        "Ethernet7/2": (43.9375, 3.2869, 6.59, 0.31206419827462284, -30.0, "XXX000a`0003", sr4_100),
        "Ethernet31/1": (
            38.73828125,
            3.3046,
            30.75,
            -0.48711062722327725,
            -0.7350321072677986,
            "XXX000AB0001A",
            thresholds(
                temperature=(85.0, 80.0, -5.0, 0.0),
                voltage=(3.6, 3.5, 2.9000000000000004, 3.0),
                bias=(80.0, 70.0, 0.0, 10.0),
                tx_power=(2.5000502848689585, 2.000018654066018, -7.500682433658049, -7.000570999772329),
                rx_power=(3.000082025538127, 2.000018654066018, -12.502636844309393, -11.49966742310231),
            ),
        ),
    }
    for name, (temp, volt, bias, tx, rx, serial, limits) in expected.items():
        sample, lanes, state = _stored(ports[name])
        assert (sample.temperature_c, sample.voltage_v) == (approx(temp), approx(volt)), name
        assert (lanes.bias_ma, lanes.tx_power_dbm, lanes.rx_power_dbm) == (
            approx([bias]),
            approx([tx]),
            approx([rx]),
        ), name
        assert state.module_serial == serial
        assert state.module_thresholds == limits, name
        assert state.rx_power_low_warn_dbm == limits["rx_power_low_warn"]
        assert state.rx_power_low_alarm_dbm == limits["rx_power_low_alarm"]
        assert state.temperature_high_warn_c == limits["temperature_high_warn"]
        # a dark port's -30 dBm is a reading (no light), not a sensor fault: EOS' JSON carries no
        # flag for it to contradict, and it is stored for the low-Rx rules to judge
        assert state.dom_suspect is None, name
    ignored = r.json()["ignored"]
    overridden = {
        f"details.{q}.{level}Overridden": 4
        for q in ("temperature", "voltage", "txBias", "txPower", "rxPower", "totalRxPower")
        for level in ("highAlarm", "highWarn", "lowAlarm", "lowWarn")
    }
    assert ignored == {
        "count": 116,
        "fields": {**overridden, "channel": 4, "mediaType": 4, "narrowBand": 4, "slot": 4, "updateTime": 4},
    }
