"""The Prometheus pull reads node_exporter's ethtool series as node_exporter names them.

node_exporter's ethtool collector writes a driver's ``rx_corrected_bits_phy`` as
``node_ethtool_received_corrected_bits_phy`` (``rx``/``tx`` -> ``received``/``transmitted``,
collector/ethtool_linux.go); a site whose exporter keeps the driver's words is read too.
"""

from __future__ import annotations

from inventory.core.interop.prometheus import mapping_effective, query_params, samples_from_matrix


def _series(name: str, value: str, device: str = "eth1") -> dict:
    labels = {"__name__": name, "device": device, "instance": "gpu-1:9100", "job": "node"}
    return {"metric": labels, "values": [[1764417600, value]]}


def test_the_query_asks_for_both_spellings_of_each_stat():
    mapping = mapping_effective({})
    query = query_params(mapping, end=1764417600, window=300, step=60)["query"]
    for stat in mapping["ethtool_stats"]:
        assert f"node_ethtool_{stat}" in query
    assert "node_ethtool_received_corrected_bits_phy" in query
    assert "node_ethtool_link_down_events_phy" in query
    assert query.count("node_ethtool_link_down_events_phy") == 1  # no rx in it: asked once


def test_node_exporter_names_and_driver_names_give_the_same_sample():
    mapping = mapping_effective({})
    node_exporter = samples_from_matrix(
        [
            _series("node_ethtool_received_corrected_bits_phy", "1200"),
            _series("node_ethtool_link_down_events_phy", "2"),
            _series("node_ethtool_received_pause_ctrl_phy", "30"),
            _series("node_ethtool_transmitted_pause_ctrl_phy", "4"),
        ],
        mapping,
    )
    driver = samples_from_matrix(
        [
            _series("node_ethtool_rx_corrected_bits_phy", "1200"),
            _series("node_ethtool_link_down_events_phy", "2"),
            _series("node_ethtool_rx_pause_ctrl_phy", "30"),
            _series("node_ethtool_tx_pause_ctrl_phy", "4"),
        ],
        mapping,
    )
    assert node_exporter.samples == driver.samples
    (sample,) = node_exporter.samples
    assert (sample["device"], sample["port"]) == ("gpu-1", "eth1")
    assert (sample["fec_corrected_bits"], sample["link_down_events"]) == (1200, 2)
    assert (sample["pfc_pause_rx"], sample["pfc_pause_tx"]) == (30, 4)
