"""The format registry (``?format=`` name -> adapter) and the one dispatch every caller uses."""

from __future__ import annotations

from collections.abc import Callable

from inventory.core.telemetry.adapters.arista import parse_arista_eos
from inventory.core.telemetry.adapters.common import AdapterError, Context
from inventory.core.telemetry.adapters.ethtool import (
    parse_ethtool_fec,
    parse_ethtool_module,
    parse_ethtool_stats,
)
from inventory.core.telemetry.adapters.junos import parse_junos
from inventory.core.telemetry.adapters.mlxlink import parse_mlxlink
from inventory.core.telemetry.adapters.openconfig import parse_gnmi
from inventory.core.telemetry.adapters.perfquery import parse_perfquery
from inventory.core.telemetry.adapters.prometheus import parse_prometheus
from inventory.core.telemetry.adapters.sniff import other_format
from inventory.core.telemetry.adapters.sonic import parse_sonic_cli, parse_sonic_counters
from inventory.core.telemetry.adapters.sonic_dom import parse_sonic_dom
from inventory.core.telemetry.adapters.xena import parse_xena
from inventory.core.telemetry.decode import without_bom

FORMATS: dict[str, Callable[[bytes, Context], list[dict]]] = {
    "ethtool-fec": parse_ethtool_fec,
    "ethtool-stats": parse_ethtool_stats,
    "ethtool-module": parse_ethtool_module,
    "mlxlink": parse_mlxlink,
    "perfquery": parse_perfquery,
    "sonic-counters": parse_sonic_counters,
    "sonic-cli": parse_sonic_cli,
    "sonic-dom": parse_sonic_dom,
    "gnmi": parse_gnmi,
    "openconfig": parse_gnmi,
    "prometheus": parse_prometheus,
    "xena": parse_xena,
    "junos": parse_junos,
    "arista-eos": parse_arista_eos,
}


def parse(fmt: str, body: bytes, ctx: Context) -> list[dict]:
    """The body read as ``fmt``: sample dicts; the source fields not used are in ``ctx.report``.
    A body that plainly has another known format's shape is refused naming it. A leading UTF-8
    byte-order mark (text saved by Windows tools) is dropped first: it is no part of the output."""
    body = without_bom(body)
    other = other_format(fmt, body)
    if other is not None:
        name, what = other
        raise AdapterError(f"This is {what}, not {fmt} output: use ?format={name}.")
    try:
        return FORMATS[fmt](body, ctx)
    except AdapterError:
        raise
    except RecursionError:
        raise AdapterError(f"Cannot read the body as {fmt}: it is nested too deeply.") from None
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError) as exc:
        raise AdapterError(f"Cannot read the body as {fmt}: {exc}") from exc
