"""The absolute links that leave the site: what a QR label encodes, and what a reminder, fault
notice or alert mail links to. They are built here and nowhere else, from
``CABLETRACK_BASE_URL`` (never from a request), so the link in a technician's mail is the very
link printed on the cable's label.

A label or name is one path segment, quoted whole (``/`` too, so ``S01-G02/B`` is
``/r/S01-G02%252FB``: see ``core.names``). The site's own pages link with relative URLs from
``reverse`` (``Cable.get_absolute_url``); both resolve to the same page.
"""

from __future__ import annotations

from urllib.parse import quote

from inventory.conf import app_settings
from inventory.core.names import url_segment


def site_url(path: str, *, base_url: str | None = None) -> str:
    """``<base>/<path>`` for a path that starts with ``/``."""
    return (app_settings.base_url if base_url is None else base_url).rstrip("/") + path


def cable_url(label: str, *, base_url: str | None = None) -> str:
    """``<base>/c/<label>``: the cable page."""
    return site_url(f"/c/{quote(label, safe='')}", base_url=base_url)


def rack_url(name: str, *, base_url: str | None = None) -> str:
    """``<base>/r/<name>``: the rack page, the name as the ``name`` path converter reads it."""
    return site_url(f"/r/{quote(url_segment(name), safe='')}", base_url=base_url)


def alert_url(alert_id: int, *, anchor: str = "") -> str:
    """``<base>/alerts/<id>/``, with ``#anchor`` when given."""
    return site_url(f"/alerts/{alert_id}/" + (f"#{anchor}" if anchor else ""))
