"""The NetBox and Nautobot API clients: an optional extra (``pip install 'cabletrack[netbox]'``).

Only sites that sync with NetBox or Nautobot need ``pynetbox`` / ``pynautobot``; the import is
made here, when a sync or an export runs, so the rest of the product starts without them and a
site without the extra gets a clear error instead of an ImportError at start-up.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from inventory.core.interop.snapshot import NetboxError

CLIENTS = {"netbox": "pynetbox", "nautobot": "pynautobot"}


def api_client(flavor: str) -> ModuleType:
    """The client package for ``flavor`` ("netbox" or "nautobot")."""
    package = CLIENTS[flavor]
    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise NetboxError(
            f"{package} is not installed: NetBox/Nautobot sync needs the extra, "
            "pip install 'cabletrack[netbox]'."
        ) from exc
