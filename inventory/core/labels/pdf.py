"""Labels to PDF with reportlab. Pure: dataclasses in, bytes out.

The QR code is embedded as a 1-bit image XObject (one module per pixel, scaled up by the PDF
transform, no interpolation) rather than drawn module by module: several times faster, and
the printer gets crisp edges at any resolution.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from reportlab.lib.colors import Color
from reportlab.pdfbase import pdfdoc
from reportlab.pdfgen.canvas import Canvas

from inventory.core.labels.layout import QUIET_MODULES, face_layout, text_specs
from inventory.core.labels.model import Label
from inventory.core.labels.qr import qr_matrix
from inventory.core.labels.stocks import MM, Stock
from inventory.core.labels.text import FONTS, fit_block

GUIDE = Color(0.75, 0.75, 0.75)
EC_LEVEL = "Q"  # recovers ~25% of the code: survives a scuffed or smudged label


class _BitmapXObject(pdfdoc.PDFImageXObject):
    """A 1 bit-per-pixel DeviceGray image (0 = black) from packed rows."""

    def __init__(self, name: str, packed: bytes, width: int, height: int):
        self.name = name
        self.width = width
        self.height = height
        self.bitsPerComponent = 1
        self.colorSpace = "DeviceGray"
        self.streamContent = zlib.compress(packed, 1)
        self._filters = ("FlateDecode",)
        self.mask = None


def _qr_xobject(canvas: Canvas, url: str, seen: dict[str, tuple[str, str, int]]) -> tuple[str, str, int]:
    """Register the QR of ``url`` once in this document; return its names and module count."""
    if url in seen:
        return seen[url]
    name = f"QR{len(seen)}"
    reg = canvas._doc.getXObjectName(name)
    matrix = qr_matrix(url, ec_level=EC_LEVEL)
    n = matrix.shape[0]
    packed = np.packbits(1 - matrix, axis=1).tobytes()
    obj = _BitmapXObject(name, packed, n, n)
    canvas._setXObjects(obj)
    canvas._doc.Reference(obj, reg)
    canvas._doc.addForm(name, obj)
    seen[url] = (name, reg, n)
    return seen[url]


def _guides(stock: Stock, x0: float, top: float) -> str:
    """Light dashed fold lines (raw PDF operators; the same on every label)."""
    ops = []
    for fx in stock.folds:
        x = x0 + fx * MM
        ops.append(f"{x:.2f} {top:.2f} m {x:.2f} {top - stock.height * MM:.2f} l S")
    return f"q {GUIDE.red:.2f} G 0.3 w [1 2] 0 d " + " ".join(ops) + " Q" if ops else ""


def _draw_label(canvas: Canvas, seen: dict, label: Label, stock: Stock, x0: float, top: float) -> None:
    """Draw one label whose top-left corner is at (x0, top) in points.

    A face the same size as one already drawn (the second face of a flag) replays the first
    face's drawing operators, shifted: same result, half the work.
    """
    if stock.folds:
        canvas._code.append(_guides(stock, x0, top))
    specs = text_specs(label, stock)
    drawn: dict[tuple[float, float], tuple[float, float, list[str]]] = {}
    for face in stock.faces:
        if (face.w, face.h) in drawn:
            fx, fy, ops = drawn[(face.w, face.h)]
            dx, dy = (face.x - fx) * MM, -(face.y - fy) * MM
            canvas._code.append(f"q 1 0 0 1 {dx:.3f} {dy:.3f} cm")
            canvas._code.extend(ops)
            canvas._code.append("Q")
            continue
        start = len(canvas._code)
        lay = face_layout(stock, face)
        if lay.qr_side > 0:
            name, reg, n = _qr_xobject(canvas, label.url, seen)
            module = lay.qr_side * MM / (n + 2 * QUIET_MODULES)
            side = module * n
            qx = x0 + lay.qr_x * MM + module * QUIET_MODULES
            qy = top - (lay.qr_y + lay.qr_side) * MM + module * QUIET_MODULES
            canvas._code.append(f"q {side:.3f} 0 0 {side:.3f} {qx:.3f} {qy:.3f} cm /{reg} Do Q")
            canvas._formsinuse.append(name)
        block = fit_block(specs, lay.text_w * MM, lay.text_h * MM)
        tx = x0 + lay.text_x * MM
        ty = top - lay.text_y * MM
        text = canvas.beginText()
        for line in block.lines:
            text.setFont(FONTS[line.bold], line.size)
            text.setTextOrigin(tx, ty - line.baseline)
            text.textOut(line.text)
        canvas.drawText(text)
        drawn[(face.w, face.h)] = (face.x, face.y, canvas._code[start:])


def render_pdf(
    labels: Sequence[Label],
    stock: Stock,
    *,
    title: str = "cabletrack labels",
    progress: Callable[[int], None] | None = None,
    progress_every: int = 250,
) -> bytes:
    """All ``labels`` on ``stock``: one page per label on rolls, a grid per page on sheets."""
    buf = io.BytesIO()
    if stock.sheet:
        page = (stock.sheet.width * MM, stock.sheet.height * MM)
    else:
        page = (stock.width * MM, stock.height * MM)
    canvas = Canvas(buf, pagesize=page, pageCompression=1, invariant=1)
    canvas.setTitle(title)
    canvas.setCreator("cabletrack")
    per_page = stock.per_page
    draw = partial(_draw_label, canvas, {}, stock=stock)
    for i, label in enumerate(labels):
        if i and i % per_page == 0:
            canvas.showPage()
        if stock.sheet:
            cell = i % per_page
            col, row = cell % stock.sheet.cols, cell // stock.sheet.cols
            x0 = (stock.sheet.left + col * stock.sheet.pitch_x) * MM
            top = page[1] - (stock.sheet.top + row * stock.sheet.pitch_y) * MM
        else:
            x0, top = 0.0, page[1]
        draw(label, x0=x0, top=top)
        if progress and (i + 1) % progress_every == 0:
            progress(i + 1)
    canvas.showPage()
    canvas.save()
    if progress:
        progress(len(labels))
    return buf.getvalue()
