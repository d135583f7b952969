"""Real NIC captures (tests/data/real, sources in its README) posted through POST /api/telemetry/:
``ethtool -S`` of mlx5, bnxt_en, ice and i40e, and ``ethtool -m`` of three SFP+ 10G-SR modules on
those NICs. Every stored value is the file's value; every counter not stored is named in
``ignored`` (per-queue ones included); the misread module is kept aside as "sensor suspect".

The expected values are read from the file by the test itself, with the driver's own counter
names written out here (not the product's table), and the figures that make each capture worth
having are spelled out as literals.
"""

from __future__ import annotations

import re
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
STORED = (
    "fec_corrected_cw",
    "fec_uncorrectable_cw",
    "fec_corrected_bits",
    "rx_bits",
    "pfc_pause_rx",
    "pfc_pause_tx",
    "pfc_pause_duration_us",
    "link_down_events",
)


@pytest.fixture
def nic():
    dev = Device.objects.create(name="gpu-7", role="gpu_node")
    return f.port(dev, "ens1f0np0")


@pytest.fixture
def post(user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    ts = (timezone.now() - timedelta(minutes=1)).replace(microsecond=0)

    def _post(name: str, fmt: str):
        query = f"?format={fmt}&device=gpu-7&port=ens1f0np0&ts={ts.isoformat().replace('+00:00', 'Z')}"
        r = client.post("/api/telemetry/" + query, data=(REAL / name).read_bytes(), content_type="text/plain")
        assert r.status_code == 200, r.content
        assert (r.json()["stored"], r.json()["rejected"]) == (1, 0), r.json()["errors"]
        return r.json()

    return _post


class Counters(dict):
    """The file's counters, remembering which ones the expectation read."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> int:
        self.read.add(key)
        return super().__getitem__(key)


def file_counters(name: str) -> Counters:
    """The capture's counters as the file prints them (``[N]: name`` for bnxt_en's rings)."""
    out = Counters()
    for line in (REAL / name).read_text().splitlines():
        m = re.fullmatch(r"\s*((?:\[\d+\]: )?[\w.\-]+): (\d+)\s*", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def summed(c: dict[str, int], template: str) -> int:
    names = [template.format(n) for n in range(8)]
    assert all(n in c for n in names), template  # all eight priorities are in the capture
    return sum(c[n] for n in names)


def bnxt_en(c):
    return {
        "fec_corrected_bits": c["rx_corrected_bits"],
        "fec_corrected_cw": c["rx_fec_corrected_blocks"],
        "fec_uncorrectable_cw": c["rx_fec_uncorrectable_blocks"],
        "rx_bits": c["rx_bits"],
        "link_down_events": c["link_down_events"],
        "pfc_pause_rx": summed(c, "rx_pfc_ena_frames_pri{}"),
        "pfc_pause_tx": summed(c, "tx_pfc_ena_frames_pri{}"),
        "pfc_pause_duration_us": summed(c, "pfc_pri{}_rx_duration_us"),
    }


def mlx5_without_pfc(c):
    # kernel 4.15 prints no rx_prioN_pause lines (PFC off): the port's pause totals are read
    return {
        "fec_corrected_bits": c["rx_corrected_bits_phy"],
        "link_down_events": c["link_down_events_phy"],
        "pfc_pause_rx": c["rx_pause_ctrl_phy"],
        "pfc_pause_tx": c["tx_pause_ctrl_phy"],
    }


def xoff(rx: str, tx: str):
    return lambda c: {"pfc_pause_rx": summed(c, rx), "pfc_pause_tx": summed(c, tx)}


CAPTURES = {
    # file: (how its stored fields follow from its counters, the figures worth spelling out)
    "ethtool_S_bnxt_en_10g_sr_link_down_2.txt": (
        bnxt_en,
        {"link_down_events": 2, "rx_bits": 58_069_568_243_688, "fec_corrected_bits": 0},
    ),
    "ethtool_S_bnxt_en_kernel6.6_ethq.txt": (
        bnxt_en,
        {"link_down_events": 0, "rx_bits": 4_621_497_487_696_704, "fec_uncorrectable_cw": 0},
    ),
    "ethtool_S_mlx5_connectx4_kernel4.15_ethq.txt": (
        mlx5_without_pfc,
        {"link_down_events": 0, "fec_corrected_bits": 0, "pfc_pause_tx": 0},
    ),
    "ethtool_S_i40e_10g_sr_xoff_rx_names.txt": (
        xoff("port.rx_priority_{}_xoff_rx", "port.tx_priority_{}_xoff_tx"),
        {"pfc_pause_rx": 0},
    ),
    "ethtool_S_i40e_2018_ethq.txt": (
        xoff("port.rx_priority_{}_xoff", "port.tx_priority_{}_xoff"),
        {"pfc_pause_rx": 0},
    ),
    "ethtool_S_ice_10g_sr.txt": (
        xoff("rx_priority_{}_xoff.nic", "tx_priority_{}_xoff.nic"),
        {"pfc_pause_tx": 0},
    ),
    "ethtool_S_ice_ethq.txt": (
        xoff("rx_priority_{}_xoff.nic", "tx_priority_{}_xoff.nic"),
        {"pfc_pause_tx": 0},
    ),
}


@pytest.mark.parametrize("name", CAPTURES)
def test_ethtool_stats_real_nic_every_stored_value_is_the_files(nic, post, name):
    expect_from, literals = CAPTURES[name]
    counters = file_counters(name)
    expected = expect_from(counters)
    assert literals.items() <= expected.items()  # the file says what the test expects it to
    out = post(name, "ethtool-stats")
    sample = TelemetrySample.objects.get(port=nic)
    # every field the product stores is the file's; the fields the capture has no counter for: none
    assert {fld: getattr(sample, fld) for fld in STORED} == {**dict.fromkeys(STORED), **expected}
    # every other counter of the output is named, once each: none dropped in silence
    assert out["ignored"]["fields"] == dict.fromkeys(set(counters) - counters.read, 1)
    assert out["ignored"]["count"] == len(counters) - len(counters.read)


def test_bnxt_en_per_ring_counters_are_named_not_dropped(nic, post):
    out = post("ethtool_S_bnxt_en_10g_sr_link_down_2.txt", "ethtool-stats")
    ignored = out["ignored"]["fields"]
    rings = [k for k in ignored if k.startswith("[")]
    assert len(rings) == 8 * 24  # 8 rings x 24 counters, as the file prints them
    assert ignored["[7]: tx_ucast_packets"] == 1
    # PCS symbol errors are not FEC symbol errors: named, not stored as one
    assert "rx_pcs_symbol_err" in ignored
    assert TelemetrySample.objects.get(port=nic).fec_symbol_errors is None


def test_i40e_xon_to_xoff_transitions_are_not_read_as_pauses(nic, post):
    out = post("ethtool_S_i40e_10g_sr_xoff_rx_names.txt", "ethtool-stats")
    ignored = out["ignored"]["fields"]
    assert {f"port.rx_priority_{n}_xon_2_xoff" for n in range(8)} <= set(ignored)
    assert {f"port.rx_priority_{n}_xon_rx" for n in range(8)} <= set(ignored)
    assert "port.rx_priority_0_xoff_rx" not in ignored


# ------------------------------------------------------------------------------------------
# ethtool -m of SFF-8472 SFP+ modules (the same three hosts)

ALL_OFF = {
    f"{q}_{lvl}": False
    for q in ("bias", "tx_power", "rx_power", "temperature", "voltage")
    for lvl in ("high_alarm", "low_alarm", "high_warn", "low_warn")
}


def approx(v):
    return pytest.approx(v, rel=1e-6)


def limits(**by_quantity):
    """{"bias": (high alarm, low alarm, high warn, low warn)} -> module_thresholds (file order)."""
    out = {}
    for quantity, values in by_quantity.items():
        for level, value in zip(("high_alarm", "low_alarm", "high_warn", "low_warn"), values, strict=True):
            out[f"{quantity}_{level}"] = approx(value)
    return out


@pytest.mark.parametrize(
    ("name", "identity", "gauges", "lanes", "thresholds", "flags_on"),
    [
        (
            "ethtool_m_sfp_10gsr_fs_i40e.txt",
            ("FS", "SFP-10GSR-85", "F2020533679"),
            (39.18, 3.3544),
            ([6.090], [-1.96], [-1.88]),
            limits(
                bias=(15.0, 2.0, 12.0, 3.0),
                tx_power=(2.00, -9.50, 0.00, -7.50),
                temperature=(80.0, -10.0, 70.0, 0.0),
                voltage=(3.63, 2.97, 3.465, 3.135),
                rx_power=(2.00, -14.10, 0.00, -12.10),
            ),
            # the module reports its bias low alarm On at 6.09 mA (threshold 2.0): its own word, kept
            {"bias_low_alarm"},
        ),
        (
            "ethtool_m_sfp_10gsr_oem_ice.txt",
            ("OEM", "SFP+-10G-SR", "GJ2308161004"),
            (40.01, 3.4365),
            ([6.762], [-2.88], [-2.24]),
            limits(
                bias=(15.0, 0.0, 12.0, 1.0),
                tx_power=(1.00, -7.00, 0.00, -6.00),
                temperature=(75.0, -5.0, 70.0, 0.0),
                voltage=(3.6, 3.0, 3.5, 3.1),
                rx_power=(1.00, -15.50, 0.00, -14.50),
            ),
            set(),
        ),
    ],
)
def test_ethtool_m_real_sfp_modules(nic, post, name, identity, gauges, lanes, thresholds, flags_on):
    post(name, "ethtool-module")
    sample = TelemetrySample.objects.get(port=nic)
    assert (sample.temperature_c, sample.voltage_v) == (approx(gauges[0]), approx(gauges[1]))
    stored = TelemetryLaneSample.objects.get(port=nic)
    assert (stored.bias_ma, stored.tx_power_dbm, stored.rx_power_dbm) == tuple(approx(x) for x in lanes)
    state = PortTelemetryState.objects.get(port=nic)
    assert (state.module_vendor, state.module_part, state.module_serial) == identity
    assert state.module_thresholds == thresholds
    assert state.module_flags == {**ALL_OFF, **dict.fromkeys(flags_on, True)}
    assert (state.rx_power_low_warn_dbm, state.rx_power_low_alarm_dbm, state.temperature_high_warn_c) == (
        thresholds["rx_power_low_warn"],
        thresholds["rx_power_low_alarm"],
        thresholds["temperature_high_warn"],
    )
    assert state.dom_suspect is None


def test_ethtool_m_misread_sfp_on_bnxt_en_is_kept_aside_as_suspect(nic, post):
    """The reading the issue names: an FS SFP-10GSR-85 on a Broadcom bnxt_en port reporting
    0.2287 V, 0 C, 99.168 mA and +7.56 dBm Tx, with thresholds that contradict each other. Its
    own words (flags, thresholds) are kept; its reading never reaches the stored gauges."""
    out = post("ethtool_m_sfp_10gsr_fs_bnxt_en_misread.txt", "ethtool-module")
    state = PortTelemetryState.objects.get(port=nic)
    assert (state.module_vendor, state.module_part, state.module_serial) == (
        "FS",
        "SFP-10GSR-85",
        "S2109191251",
    )
    reasons = state.dom_suspect["reasons"]
    assert any("supply voltage 0.2287 V" in x for x in reasons)
    assert any("voltage 0.2287 above its own high alarm 0.0012" in x for x in reasons)
    assert state.dom_suspect["voltage_v"] == approx(0.2287)
    assert state.dom_suspect["temperature_c"] == 0.0
    assert state.dom_suspect["tx_power_dbm"] == [approx(7.56)]
    assert state.dom_suspect["rx_power_dbm"] == [approx(4.36)]
    assert state.dom_suspect["bias_ma"] == [approx(99.168)]
    sample = TelemetrySample.objects.get(port=nic)
    assert (sample.temperature_c, sample.voltage_v) == (None, None)
    assert not TelemetryLaneSample.objects.filter(port=nic).exists()
    assert state.module_flags == {
        **ALL_OFF,
        "bias_high_alarm": True,
        "tx_power_low_alarm": True,
        "temperature_low_alarm": True,
        "voltage_low_alarm": True,
    }
    assert state.module_thresholds == {
        **limits(
            bias=(15.39, 0.0, 36.006, 16.448),
            tx_power=(-0.85, -0.85, -0.85, -0.85),
            temperature=(3.02, 7.06, 0.0, 0.25),
            voltage=(0.0012, 0.0006, 2.6368, 0.0),
        ),
        "rx_power_high_alarm": approx(-0.85),
        "rx_power_low_alarm": approx(-0.85),
    }
    # "0.0000 mW / -inf dBm": thresholds the module does not set, named rather than dropped
    ignored = out["ignored"]["fields"]
    assert ignored["Laser rx power high warning threshold"] == 1
    assert ignored["Laser rx power low warning threshold"] == 1


# ------------------------------------------------------------------------------------------
# node_exporter's Prometheus text (its ethtool collector), the whole page


def test_node_exporter_page_with_an_e1000e_ethtool_collector(user_with_role):
    """node_exporter's own end-to-end output of the day it gained its ethtool collector: a full
    /metrics page (4,177 lines, every Linux collector) with the ``node_ethtool_*`` series of an
    Intel e1000e port ``eth0`` as node_exporter names them (``rx_`` written ``received_``,
    ``1.260062e+06``). e1000e has none of the physical-layer counters cabletrack stores, so the
    page is refused as "no reading", every series of it named in ``ignored``, nothing stored."""
    name = "node_exporter_e2e-output_ethtool_e1000e.txt"
    text = (REAL / name).read_text()
    dev = Device.objects.create(name="node-1", role="gpu_node")
    eth0 = f.port(dev, "eth0")
    series = Counter(
        re.match(r"[A-Za-z_:][\w:]*", line).group() for line in text.splitlines() if line and line[0] != "#"
    )
    ethtool = {k: n for k, n in series.items() if k.startswith("node_ethtool_")}
    assert ethtool == dict.fromkeys(
        [
            *(f"node_ethtool_received_{s}" for s in ("broadcast", "missed", "multicast", "unicast")),
            *(f"node_ethtool_{s}_total" for s in ("received_errors", "received_packets")),
            *(f"node_ethtool_{s}_total" for s in ("transmitted_errors", "transmitted_packets")),
            *(f"node_ethtool_transmitted_{s}" for s in ("aborted", "underrun")),
            *(f"node_ethtool_transmitted_{s}_collisions" for s in ("single", "multi")),
            "node_ethtool_align_errors",
        ],
        1,
    )
    assert 'node_ethtool_received_packets_total{device="eth0"} 1.260062e+06' in text

    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    r = client.post("/api/telemetry/?format=prometheus&device=node-1", data=text, content_type="text/plain")
    out = r.json()
    assert r.status_code == 200, r.content
    assert (out["stored"], out["rejected"]) == (0, 1), out
    assert [e["port"] for e in out["errors"]] == ["eth0"] and "no reading" in str(out["errors"]), out[
        "errors"
    ]
    # every series of the page is named, as often as the page has it: none dropped in silence
    assert out["ignored"]["fields"] == dict(series)
    assert out["ignored"]["count"] == sum(series.values()) == 2_317
    assert not TelemetrySample.objects.filter(port=eth0).exists()
