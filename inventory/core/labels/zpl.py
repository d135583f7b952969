"""Labels to ZPL II for Zebra thermal printers. Pure: dataclasses in, text out.

One ``^XA .. ^XZ`` format per label, sized with ``^PW``/``^LL`` in printer dots. The QR code is
``^BQN`` (model 2) at error level Q with automatic mode selection; text is font 0 (the
printer's scalable CG Triumvirate Bold Condensed), one ``^FO`` per line, fitted with the same
shrink-then-wrap fitter as the PDF. Widths are measured with Helvetica-Bold metrics, wider
than the condensed printer font, so a line that fits here fits on the label. Field data goes
through ``^FH`` hex escapes (``_5E`` for ``^``) with ``^CI28`` (UTF-8), so no label text can
break the format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from inventory.core.labels.layout import QUIET_MODULES, face_layout, text_specs
from inventory.core.labels.model import Label
from inventory.core.labels.qr import version_for
from inventory.core.labels.stocks import Stock
from inventory.core.labels.text import fit_block, helvetica_width

EC_LEVEL = "Q"
BQ_TOP_OFFSET = 10  # ^BQN prints its symbol about 10 dots below the field origin


def _measure(text: str, bold: bool) -> float:
    return helvetica_width(text, True)


def zpl_escape(text: str) -> str:
    """Field data for ``^FH``: ``^``, ``~``, ``_``, control and non-ASCII bytes as ``_XX``."""
    out = []
    for ch in text:
        if ch in "^~_" or not (" " <= ch <= "\x7e"):
            out.append("".join(f"_{b:02X}" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def qr_modules(url: str) -> int:
    return version_for(len(url.encode("utf-8")), EC_LEVEL) * 4 + 17


def _label_zpl(label: Label, stock: Stock, dpmm: float) -> str:
    out = ["^XA", "^CI28", f"^PW{round(stock.width * dpmm)}", f"^LL{round(stock.height * dpmm)}", "^LH0,0"]
    k = dpmm * 25.4 / 72  # dots per point
    # The PDF's specs in dots (every other choice kept: where a name wraps, what is never cut).
    specs = [replace(s, max_size=s.max_size * k, min_size=s.min_size * k) for s in text_specs(label, stock)]
    n = qr_modules(label.url)
    for face in stock.faces:
        lay = face_layout(stock, face)
        side = int(lay.qr_side * dpmm)
        mag = max(1, min(10, side // (n + 2 * QUIET_MODULES)))
        if side > 0 and (n + 2 * QUIET_MODULES) * mag <= side:
            qx = int(lay.qr_x * dpmm) + QUIET_MODULES * mag
            qy = int(lay.qr_y * dpmm) + QUIET_MODULES * mag - min(BQ_TOP_OFFSET, QUIET_MODULES * mag)
            out.append(f"^FO{qx},{qy}^BQN,2,{mag}^FH^FD{EC_LEVEL}A,{zpl_escape(label.url)}^FS")
        tx, ty = int(lay.text_x * dpmm) + 1, int(lay.text_y * dpmm)
        block = fit_block(specs, int(lay.text_w * dpmm) - 1, int(lay.text_h * dpmm), _measure)
        for line in block.lines:
            h = int(line.size)
            top = ty + int(line.baseline - 0.93 * line.size)
            out.append(f"^FO{tx},{top}^A0N,{h},{h}^FH^FD{zpl_escape(line.text)}^FS")
    out.append("^XZ")
    return "\n".join(out)


def render_zpl(labels: Sequence[Label], stock: Stock, *, dpi: int = 203) -> str:
    """ZPL for ``labels`` on a ``stock`` roll at ``dpi`` (203 or 300). Sheet stocks print per cell."""
    dpmm = dpi / 25.4
    return "\n".join(_label_zpl(label, stock, dpmm) for label in labels) + "\n"
