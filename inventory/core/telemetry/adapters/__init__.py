"""Adapters for the native outputs collectors already produce -> samples (dicts in the
``{"samples": [...]}`` item format, validated afterwards like any posted item).

Pure: no ORM. Each adapter takes the raw body and a ``Context`` (device/port/time from the
request, for outputs that do not name them) and returns a list of sample dicts. Formats
(``?format=``):

=================  ==========================================================================
``ethtool-fec``    ``ethtool [--json] -I --show-fec IF``: corrected/uncorrectable blocks,
                   corrected bits, histogram bins (``bin_low..bin_high``). JSON or text.
``ethtool-stats``  ``ethtool -S IF``: mlx5, bnxt_en, ice and i40e names, one table in
                   ``nic_stats`` (``rx_corrected_bits_phy``, ``link_down_events``,
                   ``rx_priority_N_xoff.nic``, ...). Needs port.
``ethtool-module`` ``ethtool -m IF``: DOM per lane, temperature, voltage, EEPROM identity,
                   the module's own warning/alarm thresholds. Needs port.
``mlxlink``        ``mlxlink ... [--json]``: module info (DOM, identity), physical counters and
                   BER, FEC histogram. JSON or text. Needs port.
``perfquery``      InfiniBand ``perfquery [-x|-E]``: one sample per "port N" block; the port is
                   ``N``, or ``port`` when given for a single block, or ``port`` with
                   ``{port}`` replaced by ``N`` (e.g. ``?port=mlx5_0/{port}``).
``sonic-counters`` SONiC COUNTERS_DB: a JSON hash of ``SAI_PORT_STAT_*`` (flat, or keyed by
                   port name), or ``redis-cli hgetall`` text (RATES/COUNTERS, with the
                   ``COUNTERS_PORT_NAME_MAP`` lookup naming the port).
``sonic-cli``      ``show interfaces counters fec-stats`` and ``... fec-histogram IF`` tables.
``gnmi``           gNMI JSON (``openconfig`` is the same adapter): proto-JSON notifications
                   (``notification[].update[]``), gnmic output (``updates[].values``) or
                   goarista's ``gnmi get`` text (``<path>:`` then the value), with
                   OpenConfig leaves (interfaces, transceiver channels, LLDP) or SONiC
                   ``COUNTERS/<port>`` hashes. Arista's component ``<if> transceiver`` is
                   read as interface ``<if>``.
``prometheus``     Prometheus text exposition: node_exporter's ethtool collector
                   (``node_ethtool_<stat>{device="<interface>"}``, ``rx``/``tx`` written
                   ``received``/``transmitted`` as node_exporter does, or not) and
                   ``cabletrack_<field>{device=..., port=...}``.
``xena``           Xena ``PP_RXFECSTATS`` (codeword histogram, uncorrectable, total).
=================  ==========================================================================

InfiniBand's ``SymbolErrorCounter`` becomes ``ib_symbol_errors``, never ``fec_symbol_errors``.
"""

from inventory.core.telemetry.adapters.common import AdapterError, Context, Report
from inventory.core.telemetry.adapters.registry import FORMATS, parse

__all__ = ["FORMATS", "AdapterError", "Context", "Report", "parse"]
