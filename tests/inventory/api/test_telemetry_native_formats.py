"""Every shared collector output imports through POST /api/telemetry/ (native adapters).

One host carries every port name the files use; native outputs that do not name the device
get it from ``?device=`` (and the port from ``?port=`` where needed).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import TokenKind
from inventory.models import Device, PortTelemetryState, TelemetryHistogram, TelemetrySample
from tests import factories as f
from tests.inventory.core.telemetry.test_adapters import DATA, FORMAT_OF

pytestmark = pytest.mark.django_db

PORT_NAMES = [
    "eth0",
    "eni8np1",
    "ens21f0np0",
    "mlx5_0",
    "1",
    "2",
    "Ethernet354",
    *[f"Ethernet{i}" for i in (0, 1, 2, 3, 4, 8, 16, 24, 32, 40, 48)],
    "0/1",
]
# files that do not name the port take it from ?port=
PORT_PARAM = {
    "06": "mlx5_0",
    "07": "mlx5_0",
    "08": "mlx5_0",
    "09": "mlx5_0",
    "11": "1",
    "12": "1",
    "19": "mlx5_0",
}


@pytest.fixture
def host():
    dev = Device.objects.create(name="host-a", role="gpu_node")
    return dev, {name: f.port(dev, name) for name in PORT_NAMES}


@pytest.mark.parametrize(
    "path",
    sorted(p for p in DATA.iterdir() if p.name[:2].isdigit() and p.name[:2] != "12"),
    ids=lambda p: p.name,
)
def test_shared_file_imports(path, host, user_with_role, settings):
    # a recorded gNMI notification keeps its own 2024 timestamp: inside the raw window here
    settings.CABLETRACK_TELEMETRY_RAW_RETENTION_DAYS = 3650
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    prefix = path.name[:2]
    ts = (timezone.now() - timedelta(minutes=1)).replace(microsecond=0)
    query = f"?format={FORMAT_OF[prefix]}&device=host-a&ts={ts.isoformat().replace('+00:00', 'Z')}"
    if prefix in PORT_PARAM:
        query += f"&port={PORT_PARAM[prefix]}"
    ctype = "application/json" if path.suffix == ".json" else "text/plain"
    r = client.post("/api/telemetry/" + query, data=path.read_bytes(), content_type=ctype)
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["rejected"] == 0, body["errors"]
    assert body["stored"] >= 1
    assert TelemetrySample.objects.count() == body["stored"]
    # a re-post (collector retry) stores nothing twice
    again = client.post("/api/telemetry/" + query, data=path.read_bytes(), content_type=ctype).json()
    assert (again["stored"], again["duplicates"]) == (0, body["stored"])


def test_a_native_record_with_no_reading_is_an_item_error_naming_what_it_ignored(host, user_with_role):
    """perfquery -E (receive error details) carries no counter cabletrack stores: the item is
    refused as no_data, every counter of the file is named in ``ignored``, nothing is stored."""
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    body = (DATA / "12_perfquery_rcv_error_details.txt").read_bytes()
    r = client.post(
        "/api/telemetry/?format=perfquery&device=host-a&port=1", data=body, content_type="text/plain"
    )
    assert r.status_code == 200, r.content
    out = r.json()
    assert (out["stored"], out["rejected"]) == (0, 1)
    assert out["errors"][0]["code"] == "no_data"
    assert out["ignored"] == {
        "count": 6,
        "fields": {
            name: 1
            for name in (
                "PortBufferOverrunErrors",
                "PortDLIDMappingErrors",
                "PortLocalPhysicalErrors",
                "PortLoopingErrors",
                "PortMalformedPktErrors",
                "PortVLMappingErrors",
            )
        },
    }
    assert not TelemetrySample.objects.exists()


def test_native_values_land_in_the_right_columns(host, user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    _, ports = host
    url = "/api/telemetry/?device=host-a&format="
    client.post(
        url + "sonic-cli",
        data=(DATA / "15_sonic_fec-stats_pre_post_ber_max.txt").read_bytes(),
        content_type="text/plain",
    )
    row = TelemetrySample.objects.get(port=ports["Ethernet48"])
    assert (row.fec_corrected_cw, row.fec_symbol_errors, row.pre_fec_ber) == (48315381, 48308608, 7.24e-10)
    client.post(
        url + "perfquery",
        data=(DATA / "11_perfquery_extended_switch_port.txt").read_bytes(),
        content_type="text/plain",
    )
    ib = TelemetrySample.objects.get(port=ports["1"])
    assert (ib.link_down_events, ib.ib_symbol_errors, ib.fec_symbol_errors) == (1, 0, None)
    client.post(
        url + "mlxlink&port=mlx5_0",
        data=(DATA / "07_mlxlink_400g_fec_histogram_cx7.json").read_bytes(),
        content_type="application/json",
    )
    hist = TelemetryHistogram.objects.select_related("layout").get(port=ports["mlx5_0"])
    assert hist.counts[1] == 65755507 and hist.layout.correction_limit == 15
    state = PortTelemetryState.objects.get(port=ports["mlx5_0"])
    assert (state.module_vendor, state.module_part) == ("SAKURA", "OSFP-400G-DR4")


def test_prometheus_content_type_needs_no_format(host, user_with_role):
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    body = b'node_ethtool_rx_corrected_bits_phy{device="eth0"} 1000\nnode_ethtool_link_down_events_phy{device="eth0"} 1\n'
    r = client.post("/api/telemetry/?device=host-a", data=body, content_type="text/plain; version=0.0.4")
    assert r.status_code == 200 and r.json()["stored"] == 1
    row = TelemetrySample.objects.get()
    assert (row.fec_corrected_bits, row.link_down_events) == (1000, 1)


def test_prometheus_non_ascii_host_and_port_labels_are_read_as_written(user_with_role):
    """A label value is UTF-8 text with only ``\\\\``, ``\\"`` and ``\\n`` escaped: "café" is
    stored as "café" (it was decoded as Latin-1 escapes, "cafÃ©", an unknown device)."""
    dev = Device.objects.create(name="nœud-café", role="gpu_node")
    port = f.port(dev, "enp1s0f0-réseau")
    client = f.api_token_client(user_with_role("collector"), TokenKind.INGEST)
    body = (
        'node_ethtool_rx_corrected_bits_phy{hostname="nœud-café",device="enp1s0f0-réseau"} 1000\n'
        'node_ethtool_link_down_events_phy{hostname="nœud-café",device="enp1s0f0-réseau"} 2\n'
    ).encode()
    r = client.post("/api/telemetry/?format=prometheus", data=body, content_type="text/plain")
    assert r.status_code == 200, r.content
    assert (r.json()["stored"], r.json()["errors"]) == (1, [])
    row = TelemetrySample.objects.get(port=port)
    assert (row.fec_corrected_bits, row.link_down_events) == (1000, 2)
