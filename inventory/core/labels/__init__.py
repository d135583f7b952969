"""Label layout: pure, ORM-free (reportlab + qrcode). Dataclasses in, PDF bytes or ZPL text out."""

from inventory.core.labels.model import CableLabel, EndInfo, Label, RackLabel
from inventory.core.labels.pdf import render_pdf
from inventory.core.labels.stocks import (
    DEFAULT_CABLE_STOCK,
    DEFAULT_RACK_STOCK,
    STOCKS,
    Face,
    Sheet,
    Stock,
    get_stock,
)
from inventory.core.labels.zpl import render_zpl

FORMATS = ("pdf", "zpl")


def render(labels, stock: Stock, fmt: str = "pdf", **kw) -> bytes:
    """Render in ``fmt`` (``pdf`` or ``zpl``) to bytes."""
    if fmt == "pdf":
        return render_pdf(labels, stock, **kw)
    if fmt == "zpl":
        return render_zpl(labels, stock).encode("utf-8")
    raise ValueError(f"Unknown label format {fmt!r}; choose pdf or zpl")


__all__ = [
    "DEFAULT_CABLE_STOCK",
    "DEFAULT_RACK_STOCK",
    "FORMATS",
    "STOCKS",
    "CableLabel",
    "EndInfo",
    "Face",
    "Label",
    "RackLabel",
    "Sheet",
    "Stock",
    "get_stock",
    "render",
    "render_pdf",
    "render_zpl",
]
