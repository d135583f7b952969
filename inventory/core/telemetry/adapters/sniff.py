"""Which known format a body has the shape of, so that a body posted under another format's name
is refused naming its own ("this is SONiC transceiver output: use ?format=sonic-dom") instead of
being read as something it is not (an EEPROM dump read as ``ethtool -m`` keeps the identity and
drops every lane in silence).

One signature per format: marks its output always carries and no other format's does. A body is
refused only when it carries none of the chosen format's marks and some other format's marks.
"""

from __future__ import annotations

import re

# format -> (what it is, marks: any of them found means the body has this format's shape)
SIGNATURES: dict[str, tuple[str, re.Pattern[bytes]]] = {
    "sonic-dom": (
        "SONiC transceiver DOM output (show interfaces transceiver eeprom --dom, or STATE_DB "
        "TRANSCEIVER_DOM_SENSOR / TRANSCEIVER_DOM_THRESHOLD)",
        re.compile(
            rb"ChannelMonitorValues:|ModuleMonitorValues:|TRANSCEIVER_DOM_(?:SENSOR|THRESHOLD)|\"rx1power\""
        ),
    ),
    "ethtool-module": (
        "ethtool -m module EEPROM output",
        re.compile(
            rb"(?m)^[ \t]*(?:Identifier\s+:\s*0x|Module temperature\s+:|Transmit avg optical power|"
            rb"Rcvr signal avg optical power|Laser output power\s+:)"
        ),
    ),
    "ethtool-fec": ("ethtool --show-fec output", re.compile(rb"FEC parameters for|\"corrected_blocks\"")),
    "ethtool-stats": (
        "ethtool -S NIC statistics",
        re.compile(
            rb"(?m)^[ \t]*NIC statistics:|^[ \t]*(?:rx_corrected_bits_phy|link_down_events_phy|rx_pfc_ena_frames_pri\d):"
        ),
    ),
    "mlxlink": (
        "mlxlink output",
        re.compile(
            rb"Raw Physical BER|Effective Physical BER|Physical Counters and BER Info|\"Operational Info\""
        ),
    ),
    "perfquery": (
        "InfiniBand perfquery output",
        re.compile(rb"(?m)^[ \t]*(?:PortSelect|SymbolErrorCounter):\."),
    ),
    "sonic-counters": (
        "SONiC COUNTERS_DB hash",
        re.compile(rb"SAI_PORT_STAT_|COUNTERS_PORT_NAME_MAP"),
    ),
    "sonic-cli": (
        "SONiC show interfaces counters fec-stats / fec-histogram table",
        re.compile(rb"FEC_CORR\s+FEC_UNCORR|Symbol Errors Per Codeword"),
    ),
    "gnmi": (
        "gNMI output (JSON, or goarista's gnmi get text)",
        re.compile(
            rb"(?m)\"notification\"\s*:|\"updates\"\s*:|^/[a-z][\w-]*(?:\[[^\]\n]*\])?/[^\n]*:[ \t]*$"
        ),
    ),
    "prometheus": ("Prometheus text exposition", re.compile(rb"(?m)^# TYPE |^node_ethtool_|^cabletrack_")),
    "xena": ("Xena PP_RXFECSTATS output", re.compile(rb"PP_RXFECSTATS")),
    "junos": (
        "Junos show interfaces output (diagnostics optics / extensive, text, | display xml or | display json)",
        re.compile(
            rb"(?m)^[ \t]*Physical interface:\s*\S|<optics-diagnostics>|<interface-information\b|\"interface-information\"\s*:"
        ),
    ),
    "arista-eos": (
        "Arista EOS show interfaces transceiver detail output (text or | json) or phy detail | json",
        re.compile(
            rb"A2D readouts|\+\+ : high alarm, \+  : high warning|\"txBias\"\s*:|\"interfacePhyStatuses\"\s*:"
        ),
    ),
}
# formats whose bodies legitimately carry another's marks (the other is read inside them)
ALSO_READS: dict[str, frozenset[str]] = {
    "sonic-counters": frozenset({"gnmi"}),
    "gnmi": frozenset({"sonic-counters"}),
    "openconfig": frozenset({"sonic-counters"}),
    "prometheus": frozenset({"ethtool-stats"}),
}
_HEAD = 1 << 16  # the marks sit in a body's first lines: 64 KiB is plenty and bounds the cost


def shape_of(body: bytes) -> list[str]:
    """The known formats whose marks the body carries (first 64 KiB)."""
    head = body[:_HEAD]
    return [fmt for fmt, (_, marks) in SIGNATURES.items() if marks.search(head)]


def other_format(fmt: str, body: bytes) -> tuple[str, str] | None:
    """(format, what it is) when the body is plainly another known format's output, else None."""
    own = "gnmi" if fmt == "openconfig" else fmt
    shapes = shape_of(body)
    if not shapes or own in shapes:
        return None
    allowed = ALSO_READS.get(fmt, frozenset())
    for other in shapes:
        if other not in allowed:
            return other, SIGNATURES[other][0]
    return None
