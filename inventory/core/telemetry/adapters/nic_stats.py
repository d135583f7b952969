"""``ethtool -S`` counter names of the NIC drivers in GPU servers -> sample fields: one table.

Each row: (driver, sample field, name pattern (a full match), how several matches combine).
Rows of one field are tried in order and the first whose pattern matches any counter of the
output sets the field; the counters of the later rows are then not used (reported as ignored).
The names do not collide between drivers, so no driver detection is needed.

Sources (the driver's own string tables):

* mlx5 (``drivers/net/ethernet/mellanox/mlx5/core/en_stats.c``): the ``*_phy`` physical port
  counters, ``rx_prioN_pause`` / ``tx_prioN_pause`` / ``rx_prioN_pause_duration`` (us).
* bnxt_en (``drivers/net/ethernet/broadcom/bnxt/bnxt_ethtool.c``, ``bnxt_port_stats_ext_arr``):
  ``link_down_events``, ``rx_bits``, ``rx_corrected_bits``, ``rx_fec_corrected_blocks``,
  ``rx_fec_uncorrectable_blocks``, ``rx_pfc_ena_frames_priN`` / ``tx_pfc_ena_frames_priN``,
  ``pfc_priN_rx_duration_us``. ``rx_pcs_symbol_err`` counts PCS symbol errors, not FEC symbols:
  not mapped.
* Intel ice (``drivers/net/ethernet/intel/ice/ice_ethtool.c``, ``ice_get_strings``):
  ``rx_priority_N_xoff.nic`` / ``tx_priority_N_xoff.nic`` (PFC XOFF frames: the pauses; XON
  frames end a pause and are not counted). ice reports FEC through ``ethtool -I --show-fec``
  (format ``ethtool-fec``), not through ``-S``.
* Intel i40e (``drivers/net/ethernet/intel/i40e/i40e_ethtool.c``): ``port.rx_priority_N_xoff_rx`` /
  ``port.tx_priority_N_xoff_tx`` in current drivers (a 10G SR port on a RHEL 8 kernel,
  ``tests/data/real/ethtool_S_i40e_10g_sr_xoff_rx_names.txt``), ``port.rx_priority_N_xoff`` /
  ``port.tx_priority_N_xoff`` in older ones (ethq's i40e capture of 2018,
  ``ethtool_S_i40e_2018_ethq.txt``). ``port.rx_priority_N_xon_2_xoff`` counts XON-to-XOFF transitions, not pauses.
* Intel irdma (the RDMA function of E810/ice): its counters are RDMA hardware counters
  (``rdma statistic`` / ``/sys/class/infiniband/irdmaN/hw_counters``), never in ``ethtool -S``;
  none of them is a physical-layer reading cabletrack stores.

The same names reach us through node_exporter's ethtool collector (``node_ethtool_<name>``),
which renames them (``collector/ethtool_linux.go``, ``buildEthtoolFQName``): every run of
characters a metric name cannot hold becomes one ``_``, the name is lower-cased, and the words
``rx`` and ``tx`` become ``received`` and ``transmitted`` (``rx_prio3_pause`` ->
``node_ethtool_received_prio3_pause``, ``rx_priority_3_xoff.nic`` ->
``node_ethtool_received_priority_3_xoff_nic``). ``stat_from_node_exporter`` undoes the words;
a name the driver spells with a dot matches ``[._]`` in its pattern, so one table reads both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple


class StatRule(NamedTuple):
    driver: str
    field: str
    pattern: str
    combine: Callable[[list[int]], int] = sum


ETHTOOL_S_COUNTERS: tuple[StatRule, ...] = (
    # FEC corrected bits
    StatRule("mlx5", "fec_corrected_bits", r"rx_corrected_bits_phy"),
    StatRule("mlx5", "fec_corrected_bits", r"rx_err_lane_\d+_phy"),
    StatRule("bnxt_en", "fec_corrected_bits", r"rx_corrected_bits"),
    # FEC codewords
    StatRule("mlx5", "fec_corrected_codewords", r"rx_fec_corrected_blocks_phy"),
    StatRule("bnxt_en", "fec_corrected_codewords", r"rx_fec_corrected_blocks"),
    StatRule("mlx5", "fec_uncorrectable_codewords", r"rx_fec_uncorrectable_blocks_phy"),
    StatRule("bnxt_en", "fec_uncorrectable_codewords", r"rx_fec_uncorrectable_blocks"),
    # line bits
    StatRule("mlx5", "rx_bits", r"rx_bits_phy"),
    StatRule("bnxt_en", "rx_bits", r"rx_bits"),
    # link
    StatRule("mlx5", "link_down_events", r"link_down_events_phy"),
    StatRule("bnxt_en", "link_down_events", r"link_down_events"),
    # PFC pause frames per direction (per priority, summed), then the port's totals
    StatRule("mlx5", "pfc_pause_rx", r"rx_prio\d+_pause"),
    StatRule("bnxt_en", "pfc_pause_rx", r"rx_pfc_ena_frames_pri\d+"),
    StatRule("ice", "pfc_pause_rx", r"rx_priority_\d+_xoff[._]nic"),
    StatRule("i40e", "pfc_pause_rx", r"port[._]rx_priority_\d+_xoff(?:_rx)?"),
    StatRule("mlx5", "pfc_pause_rx", r"rx_pause_ctrl_phy"),
    StatRule("bnxt_en", "pfc_pause_rx", r"rx_pfc_frames"),
    StatRule("mlx5", "pfc_pause_tx", r"tx_prio\d+_pause"),
    StatRule("bnxt_en", "pfc_pause_tx", r"tx_pfc_ena_frames_pri\d+"),
    StatRule("ice", "pfc_pause_tx", r"tx_priority_\d+_xoff[._]nic"),
    StatRule("i40e", "pfc_pause_tx", r"port[._]tx_priority_\d+_xoff(?:_tx)?"),
    StatRule("mlx5", "pfc_pause_tx", r"tx_pause_ctrl_phy"),
    StatRule("bnxt_en", "pfc_pause_tx", r"tx_pfc_frames"),
    # time paused (us), received pauses
    StatRule("mlx5", "pfc_pause_duration_us", r"rx_prio\d+_pause_duration"),
    StatRule("bnxt_en", "pfc_pause_duration_us", r"pfc_pri\d+_rx_duration_us"),
)

_COMPILED = tuple((rule, re.compile(rule.pattern)) for rule in ETHTOOL_S_COUNTERS)

# node_exporter's own two rewrites (``ethtoolReceivedRegex`` / ``ethtoolTransmitRegex``), undone
_RX = re.compile(r"(^|_)rx(_|$)")
_TX = re.compile(r"(^|_)tx(_|$)")
_RECEIVED = re.compile(r"(^|_)received(_|$)")
_TRANSMITTED = re.compile(r"(^|_)transmitted(_|$)")
_NOT_IN_A_METRIC_NAME = re.compile(r"_*[^0-9A-Za-z_]+_*")


def node_exporter_stat(name: str) -> str:
    """The name node_exporter's ethtool collector gives a driver's stat, after ``node_ethtool_``."""
    name = _NOT_IN_A_METRIC_NAME.sub("_", name).lower().lstrip("_")
    return _TX.sub(r"\1transmitted\2", _RX.sub(r"\1received\2", name))


def stat_from_node_exporter(name: str) -> str:
    """A ``node_ethtool_<name>`` suffix back in the driver's words (``received_prio3_pause`` ->
    ``rx_prio3_pause``), for the table; a name already in the driver's words stays as it is."""
    return _TRANSMITTED.sub(r"\1tx\2", _RECEIVED.sub(r"\1rx\2", name))


def map_ethtool_counters(stats: Mapping[str, int]) -> tuple[dict[str, Any], set[str]]:
    """``ethtool -S`` counters -> (sample fields, the counter names used)."""
    sample: dict[str, Any] = {}
    used: set[str] = set()
    for rule, rx in _COMPILED:
        if rule.field in sample:
            continue
        names = [k for k in stats if rx.fullmatch(k)]
        if names:
            sample[rule.field] = rule.combine([stats[k] for k in names])
            used.update(names)
    return sample, used
