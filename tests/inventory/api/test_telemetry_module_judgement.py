"""The module's own judgement (issue 30): its alarm/warning flags and thresholds are stored and
shown; a reading it cannot have made, or that contradicts its own flags, is "sensor suspect":
kept aside with its reasons, never in the stored gauges, so no rollup, baseline or verdict sees it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import (
    Device,
    PortRollup,
    PortTelemetryState,
    TelemetryLaneSample,
    TelemetrySample,
)
from inventory.services.telemetry.rollup import telemetry_rollup
from tests import factories as f
from tests.paths import TEST_DATA

pytestmark = pytest.mark.django_db

REAL = TEST_DATA / "real"

# A hand-written edge case, not proof: an SFF-8472 10G-SR module (as ethtool -m prints one on
# Intel i40e) whose DOM reads 0.23 V, 0 C and +7.56 dBm Tx while its own alarm flags say Off:
# the reading the issue describes. Its thresholds are the usual 10GBASE-SR ones.
TEN_G_SR_SUSPECT = b"""\tIdentifier                                : 0x03 (SFP)
\tTransceiver type                          : 10G Ethernet: 10G Base-SR
\tVendor name                               : FINISAR CORP.
\tVendor PN                                 : FTLX8571D3BCL
\tVendor SN                                 : ABC1234
\tOptical diagnostics support               : Yes
\tLaser bias current                        : 7.500 mA
\tLaser output power                        : 5.7016 mW / 7.56 dBm
\tReceiver signal average optical power     : 0.5000 mW / -3.01 dBm
\tModule temperature                        : 0.00 degrees C / 32.00 degrees F
\tModule voltage                            : 0.2300 V
\tAlarm/warning flags implemented           : Yes
\tLaser bias current high alarm             : Off
\tLaser bias current low alarm              : Off
\tLaser output power high alarm             : Off
\tLaser output power low alarm              : Off
\tModule temperature high alarm             : Off
\tModule temperature low alarm              : Off
\tModule voltage high alarm                 : Off
\tModule voltage low alarm                  : Off
\tLaser rx power high alarm                 : Off
\tLaser rx power low alarm                  : Off
\tLaser bias current high alarm threshold   : 13.200 mA
\tLaser bias current low alarm threshold    : 4.000 mA
\tLaser output power high alarm threshold   : 1.2589 mW / 1.00 dBm
\tLaser output power low alarm threshold    : 0.0933 mW / -10.30 dBm
\tModule temperature high alarm threshold   : 78.00 degrees C / 172.40 degrees F
\tModule temperature low alarm threshold    : -13.00 degrees C / 8.60 degrees F
\tModule voltage high alarm threshold       : 3.7000 V
\tModule voltage low alarm threshold        : 2.9000 V
\tLaser rx power high alarm threshold       : 1.0000 mW / 0.00 dBm
\tLaser rx power low alarm threshold        : 0.0100 mW / -20.00 dBm
"""


@pytest.fixture
def host():
    dev = Device.objects.create(name="gpu-1", role="gpu_node")
    return f.port(dev, "eth2")


def _post(user_with_role, body: bytes, minutes_ago: int = 1):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    ts = (timezone.now() - timedelta(minutes=minutes_ago)).replace(microsecond=0)
    query = f"?format=ethtool-module&device=gpu-1&port=eth2&ts={ts.isoformat().replace('+00:00', 'Z')}"
    return client.post("/api/telemetry/" + query, data=body, content_type="text/plain")


def test_ethtool_m_flags_and_thresholds_of_a_real_qsfp28_are_stored(host, user_with_role):
    r = _post(user_with_role, (REAL / "ethtool_m_qsfp28_sr4_mellanox_cumulus.txt").read_bytes())
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    state = PortTelemetryState.objects.get(port=host)
    approx = lambda v: pytest.approx(v, rel=1e-6)  # noqa: E731
    assert state.module_thresholds == {
        "bias_high_alarm": approx(8.5),
        "bias_low_alarm": approx(5.492),
        "bias_high_warn": approx(8.0),
        "bias_low_warn": approx(6.0),
        "tx_power_high_alarm": approx(5.40),
        "tx_power_low_alarm": approx(-11.40),
        "tx_power_high_warn": approx(2.40),
        "tx_power_low_warn": approx(-8.40),
        "temperature_high_alarm": approx(80.0),
        "temperature_low_alarm": approx(-10.0),
        "temperature_high_warn": approx(70.0),
        "temperature_low_warn": approx(0.0),
        "voltage_high_alarm": approx(3.5),
        "voltage_low_alarm": approx(3.1),
        "voltage_high_warn": approx(3.465),
        "voltage_low_warn": approx(3.135),
        "rx_power_high_alarm": approx(5.40),
        "rx_power_low_alarm": approx(-13.31),
        "rx_power_high_warn": approx(2.40),
        "rx_power_low_warn": approx(-10.30),
    }
    # 4 channels x 4 levels of bias, Tx and Rx power, and the module's own 8: all Off, per quantity
    assert state.module_flags == {
        f"{q}_{lvl}": False
        for q in ("bias", "tx_power", "rx_power", "temperature", "voltage")
        for lvl in ("high_alarm", "low_alarm", "high_warn", "low_warn")
    }
    assert state.dom_suspect is None
    lanes = TelemetryLaneSample.objects.get(port=host)
    assert lanes.tx_power_dbm == [approx(1.44), approx(1.20), approx(1.26), approx(1.27)]
    assert lanes.rx_power_dbm == [approx(-0.12), approx(-0.09), approx(0.55), approx(0.55)]
    assert lanes.bias_ma == [approx(6.75)] * 4
    sample = TelemetrySample.objects.get(port=host)
    assert (sample.temperature_c, sample.voltage_v) == (approx(30.56), approx(3.2350))
    # shown on the port page
    page = _port_page(host, user_with_role)
    assert "Module, as it judges itself" in page and "Sensor suspect" not in page
    assert "Alarm and warning flags on: none" in page and "-13.31" in page


def _port_page(port, user_with_role) -> str:
    client = Client()
    client.force_login(user_with_role("engineer"))
    r = client.get(port.get_absolute_url())
    assert r.status_code == 200
    return r.content.decode()


def test_a_reading_contradicting_the_module_is_suspect_kept_aside_and_shown(host, user_with_role):
    r = _post(user_with_role, TEN_G_SR_SUSPECT)
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["rejected"]) == (1, 0)
    state = PortTelemetryState.objects.get(port=host)
    reasons = state.dom_suspect["reasons"]
    assert any("supply voltage 0.23 V" in x for x in reasons)
    assert any("tx power 7.56 above its own high alarm 1" in x for x in reasons)
    assert any("voltage 0.23 below its own low alarm 2.9" in x for x in reasons)
    # the values are kept with the reasons...
    assert state.dom_suspect["voltage_v"] == pytest.approx(0.23)
    assert state.dom_suspect["tx_power_dbm"] == [pytest.approx(7.56)]
    assert state.dom_suspect["temperature_c"] == 0.0
    # ...and nowhere a rollup, baseline or rule reads
    sample = TelemetrySample.objects.get(port=host)
    assert (sample.voltage_v, sample.temperature_c) == (None, None)
    assert not TelemetryLaneSample.objects.filter(port=host).exists()
    telemetry_rollup(now=timezone.now())
    rolled = PortRollup.objects.filter(port=host)
    assert rolled.exists()
    assert all(b.tx_power_min_dbm is None and b.temperature_max_c is None for b in rolled)
    page = _port_page(host, user_with_role)
    assert "Sensor suspect" in page and "supply voltage 0.23 V" in page
    # a believable reading of the same module clears it
    good = TEN_G_SR_SUSPECT.replace(b"0.2300 V", b"3.3000 V").replace(
        b"5.7016 mW / 7.56 dBm", b"0.5000 mW / -3.01 dBm"
    )
    good = good.replace(b"0.00 degrees C / 32.00", b"35.00 degrees C / 95.00")
    assert _post(user_with_role, good, minutes_ago=0).json()["stored"] == 1
    assert PortTelemetryState.objects.get(port=host).dom_suspect is None
    assert "Sensor suspect" not in _port_page(host, user_with_role)


def test_a_collector_cannot_declare_a_reading_suspect(host, user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    ts = (timezone.now() - timedelta(minutes=1)).isoformat()
    body = {
        "samples": [f.telemetry_sample("gpu-1", "eth2", ts, voltage_v=3.3, dom_suspect={"reasons": ["x"]})]
    }
    r = client.post("/api/telemetry/", body, format="json")
    assert r.json()["errors"][0]["code"] == "invalid"
    assert "dom_suspect" in r.json()["errors"][0]["message"]
