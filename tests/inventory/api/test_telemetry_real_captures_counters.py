"""Real captures of the counter and FEC formats (tests/data/real, sources in its README) posted
through POST /api/telemetry/: every stored value is the file's value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import (
    Device,
    PortTelemetryState,
    TelemetryHistogram,
    TelemetryLaneSample,
    TelemetrySample,
)
from tests import factories as f
from tests.paths import TEST_DATA

pytestmark = pytest.mark.django_db

REAL = TEST_DATA / "real"
PORTS = (
    "eni8np1",
    "ens21f0np0",
    "mlx5_0",
    "sw/1",
    "0/1",
    *(f"Ethernet{i}" for i in (0, 8, 16, 24, 32, 40, 48, 49, 50)),
)


@pytest.fixture
def ports():
    dev = Device.objects.create(name="host-a", role="gpu_node")
    return {name: f.port(dev, name) for name in PORTS}


@pytest.fixture
def post(user_with_role, settings):
    settings.CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS = 3650  # the gNMI capture keeps its 2024 time
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    ts = (timezone.now() - timedelta(minutes=1)).replace(microsecond=0)

    def _post(name: str, fmt: str, port: str | None = None):
        query = f"?format={fmt}&device=host-a&ts={ts.isoformat().replace('+00:00', 'Z')}"
        if port:
            query += f"&port={port}"
        ctype = "application/json" if name.endswith(".json") else "text/plain"
        r = client.post("/api/telemetry/" + query, data=(REAL / name).read_bytes(), content_type=ctype)
        assert r.status_code == 200, r.content
        assert r.json()["rejected"] == 0, r.json()["errors"]
        return r.json()

    return _post


def approx(v):
    return pytest.approx(v, rel=1e-6)


def test_ethtool_fec_histogram_json(ports, post):
    out = post("ethtool_show-fec_histogram_patch.json", "ethtool-fec")
    s = TelemetrySample.objects.get(port=ports["eni8np1"])
    assert (s.fec_corrected_cw, s.fec_uncorrectable_cw) == (123, 4)
    hist = TelemetryHistogram.objects.select_related("layout").get(port=ports["eni8np1"])
    assert hist.counts == [445, 12, 2]
    assert (hist.layout.bin_low, hist.layout.bin_high) == ([0, 1, 4], [0, 3, 7])
    assert out["ignored"]["fields"] == {"active": 1, "config": 1}


def test_ethtool_fec_intel_ice_rs_port(ports, post):
    out = post("ethtool_show-fec_ice_rs.txt", "ethtool-fec")
    s = TelemetrySample.objects.get(port=ports["ens21f0np0"])
    assert (s.fec_corrected_cw, s.fec_uncorrectable_cw) == (0, 0)
    assert {"Active FEC encoding", "Supported/Configured FEC encodings"} <= set(out["ignored"]["fields"])


MLX5_STORED = ("fec_corrected_cw", "fec_uncorrectable_cw", "fec_corrected_bits", "rx_bits")
MLX5_STORED += ("pfc_pause_rx", "pfc_pause_tx", "pfc_pause_duration_us", "link_down_events")


@pytest.mark.parametrize(
    ("name", "tx_pause_ctrl_phy", "counters"),
    [
        ("ethtool_S_mlx5_connectx6dx_kernel5.15_nonzero.txt", 5_745_055, 101),
        ("ethtool_S_mlx5_connectx6dx_kernel6.5_nonzero.txt", 44_414_017, 108),
    ],
)
def test_ethtool_stats_mlx5_connectx6dx(ports, post, name, tx_pause_ctrl_phy, counters):
    """``ethtool -S`` of a 100G ConnectX-6 Dx (mlx5) under an XDP load, posted to the bpf list
    cut to the counters that were not zero: of the table's names only ``tx_pause_ctrl_phy`` is
    there (no ``tx_prioN_pause`` line, so the port's total is the pauses sent); every other
    counter is named in ``ignored``, none stored."""
    out = post(name, "ethtool-stats", port="mlx5_0")
    assert out["stored"] == 1
    sample = TelemetrySample.objects.get(port=ports["mlx5_0"])
    assert {f: getattr(sample, f) for f in MLX5_STORED} == {
        **dict.fromkeys(MLX5_STORED),
        "pfc_pause_tx": tx_pause_ctrl_phy,
    }
    ignored = out["ignored"]["fields"]
    assert out["ignored"]["count"] == len(ignored) == counters - 1  # every counter but the one read
    assert "tx_pause_ctrl_phy" not in ignored
    # the drops, the global (non-PFC) pauses and the prio0 traffic are there and not misread
    assert {"rx_discards_phy", "tx_global_pause", "tx_global_pause_duration", "rx_prio0_packets"} <= set(
        ignored
    )


def test_mlxlink_json_connectx7_osfp_dr4(ports, post):
    out = post("mlxlink_400g_dr4_cx7_mft4.34.json", "mlxlink", port="mlx5_0")
    s = TelemetrySample.objects.get(port=ports["mlx5_0"])
    assert (s.temperature_c, s.voltage_v) == (approx(61.0), approx(3.2355))  # "61", "3235.5" mV
    assert s.fec_corrected_bits == 3017647 + 15132549 + 7368641 + 9233545  # Raw Physical Errors Per Lane
    assert (s.pre_fec_ber, s.post_fec_ber) == (approx(5e-10), approx(15e-255))
    assert (s.link_down_events, s.link_error_recovery) == (0, 0)
    assert (s.speed_gbps, s.link_width) == (approx(400.0), 4)
    lanes = TelemetryLaneSample.objects.get(port=ports["mlx5_0"])
    assert lanes.bias_ma == approx([265.504, 265.504, 248.416, 248.416])
    assert lanes.rx_power_dbm == approx([3.583, 3.253, 3.233, 2.658])
    assert lanes.tx_power_dbm == approx([2.193, 1.202, 1.708, 1.274])
    state = PortTelemetryState.objects.get(port=ports["mlx5_0"])
    assert (state.module_vendor, state.module_part, state.module_serial) == (
        "EXAMPLE",
        "OSFP-400G-DR4",
        "S00XXX000000",
    )
    ignored = out["ignored"]["fields"]
    assert ignored["Rx Power Current [dBm] range"] == 1 and ignored["Temperature [C] range"] == 1
    assert ignored["Time Since Last Clear [Min]"] == 1


def test_perfquery_switch_port_link_downed(ports, post):
    out = post("perfquery_extended_switch_port.txt", "perfquery", port="sw/{port}")
    s = TelemetrySample.objects.get(port=ports["sw/1"])
    assert (s.ib_symbol_errors, s.link_error_recovery, s.link_down_events) == (0, 0, 1)
    assert s.fec_symbol_errors is None  # InfiniBand symbol errors are not FEC symbols
    assert out["ignored"]["fields"]["PortXmitDiscards"] == 1


def test_sonic_cli_fec_stats_every_row(ports, post):
    out = post("sonic_fec-stats_pre_post_ber_max.txt", "sonic-cli")
    rows = {
        "Ethernet0": (56104, 0, 56092, 1.18e-12),
        "Ethernet8": (205300, 0, 205596, 1.18e-12),
        "Ethernet16": (948842, 0, 949608, 1.18e-11),
        "Ethernet24": (279573, 0, 279499, 4.71e-12),
        "Ethernet32": (2998448, 0, 2997650, 7.06e-11),
        "Ethernet40": (1356051, 0, 1355676, 2.12e-11),
        "Ethernet48": (48315381, 0, 48308608, 7.24e-10),
    }
    assert out["stored"] == len(rows)
    for name, (corr, uncorr, symbols, pre) in rows.items():
        s = TelemetrySample.objects.get(port=ports[name])
        assert (s.fec_corrected_cw, s.fec_uncorrectable_cw, s.fec_symbol_errors) == (corr, uncorr, symbols)
        assert (s.pre_fec_ber, s.post_fec_ber) == (approx(pre), 0.0)
    assert out["ignored"]["fields"] == {"STATE": 7, "FEC_PRE_BER_MAX": 7}


def test_sonic_gnmi_counters_get(ports, post):
    out = post("sonic_gnmi_get_COUNTERS_Ethernet0.json", "gnmi")
    s = TelemetrySample.objects.get(port=ports["Ethernet0"])
    assert s.ts.timestamp() == approx(1731590441.333983)
    assert (s.fec_corrected_cw, s.fec_uncorrectable_cw, s.fec_symbol_errors) == (433513349, 0, 433516981)
    assert (s.pfc_pause_rx, s.pfc_pause_tx) == (0, 0)
    hist = TelemetryHistogram.objects.get(port=ports["Ethernet0"])
    assert hist.counts == [51285065114051, 433509717, 3632] + [0] * 13
    assert out["ignored"]["fields"]["SAI_PORT_STAT_IF_IN_OCTETS"] == 1


def test_xena_pp_rxfecstats(ports, post):
    post("xena_pp_rxfecstats.txt", "xena")
    s = TelemetrySample.objects.get(port=ports["0/1"])
    assert s.fec_uncorrectable_cw == 0  # the 17th value
    assert s.fec_corrected_cw == 460533565 + 106553 + 86  # codewords with 1..15 symbol errors
    hist = TelemetryHistogram.objects.select_related("layout").get(port=ports["0/1"])
    assert hist.counts == [11585906049992, 460533565, 106553, 86] + [0] * 12
    assert hist.layout.correction_limit == 15


def test_gnmic_get_arista_eos_transceiver_channels(ports, post):
    """gnmic Get of OpenConfig transceiver channels on an Arista EOS switch: EOS names each
    interface's transceiver component "<interface> transceiver", read as that interface; one
    channel per module, input power and bias as strings, ``output-power`` empty (no reading)."""
    out = post("gnmic_get_arista_eos_transceiver_channels_Ethernet49-50.json", "gnmi")
    assert out["stored"] == 2
    for port, rx in (("Ethernet49", 1.15), ("Ethernet50", 1.11)):
        lanes = TelemetryLaneSample.objects.get(port=ports[port])
        assert lanes.ts == datetime(2021, 7, 14, 20, 4, 45, 257457, tzinfo=UTC)  # the notification's
        assert lanes.rx_power_dbm == approx([rx])
        assert lanes.bias_ma == approx([0.0])
        assert lanes.tx_power_dbm is None
    # the channel's own index leaf repeats the path key: named, not stored
    assert out["ignored"]["fields"] == {
        "components/component/transceiver/physical-channels/channel/state/index": 2
    }


def test_goarista_gnmi_get_arista_eos_transceiver_channel(ports, post):
    """goarista's ``gnmi get`` text (the path, a colon, the JSON value) of one transceiver channel
    on an Arista EOS switch: input and output power and bias of Ethernet24, at the request's time
    (the CLI prints no timestamp)."""
    out = post("goarista_gnmi_get_arista_eos_transceiver_channel_Ethernet24.txt", "gnmi")
    assert out["stored"] == 1
    lanes = TelemetryLaneSample.objects.get(port=ports["Ethernet24"])
    assert lanes.rx_power_dbm == approx([-0.26])
    assert lanes.tx_power_dbm == approx([0.32])
    assert lanes.bias_ma == approx([7.49])
    assert out["ignored"]["fields"] == {
        "components/component/transceiver/physical-channels/channel/state/index": 1
    }
