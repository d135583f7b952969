"""The printable retest worklist: one line per cable with its QR code, grouped by rack.

Pure: plain dataclasses in, PDF bytes out (reportlab + qrcode, no ORM). The QR code encodes the
cable's absolute ``/c/<label>`` URL, so the round can be scanned cable by cable; it is embedded
as a 1-bit image (much faster than drawing modules as rectangles).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import qrcode
from PIL import Image
from qrcode.constants import ERROR_CORRECT_M
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas


@dataclass(frozen=True)
class WorklistLine:
    label: str
    url: str
    what: str
    due: str
    note: str  # "3 days overdue", "due this week"
    where: str  # device and U
    decision: str = ""  # the cable's one decision in a line: "alert open · Open the alert"


@dataclass(frozen=True)
class WorklistGroup:
    heading: str
    lines: list[WorklistLine]


def qr_image(data: str, scale: int = 6) -> Image.Image:
    """A crisp 1-bit QR image (quiet zone included), upscaled by whole pixels."""
    qr = qrcode.QRCode(error_correction=ERROR_CORRECT_M, box_size=1, border=4)
    qr.add_data(data)
    qr.make(fit=True)
    matrix = qr.get_matrix()
    n = len(matrix)
    img = Image.new("1", (n, n), 1)
    img.putdata([0 if cell else 1 for row in matrix for cell in row])
    return img.resize((n * scale, n * scale), Image.Resampling.NEAREST)


def _fitted(c, x: float, y: float, text: str, *, width: float, size: float) -> None:
    """Draw one line of Helvetica no wider than ``width``: a smaller size first (down to 6 pt),
    then cut with an ellipsis; never over the page's edge."""
    while size > 6 and c.stringWidth(text, "Helvetica", size) > width:
        size -= 0.5
    while len(text) > 1 and c.stringWidth(text, "Helvetica", size) > width:
        text = text[:-2] + "…"
    c.setFont("Helvetica", size)
    c.drawString(x, y, text)


def render_worklist_pdf(*, title: str, subtitle: str, groups: list[WorklistGroup]) -> bytes:
    buf = io.BytesIO()
    page_w, page_h = A4
    c = canvas.Canvas(buf, pagesize=A4, pageCompression=1)
    c.setTitle(title)
    margin = 14 * mm
    qr_size = 22 * mm
    line_h = qr_size + 3 * mm
    y = page_h - margin

    def header(first: bool) -> float:
        yy = page_h - margin
        c.setFont("Helvetica-Bold", 14 if first else 10)
        c.drawString(margin, yy - 5 * mm, title)
        if first:
            c.setFont("Helvetica", 9)
            c.drawString(margin, yy - 10 * mm, subtitle)
            return yy - 16 * mm
        return yy - 9 * mm

    y = header(True)
    if not groups:
        c.setFont("Helvetica", 11)
        c.drawString(margin, y - 6 * mm, "Nothing due.")
    for group in groups:
        if y - 8 * mm - line_h < margin:
            c.showPage()
            y = header(False)
        c.setFont("Helvetica-Bold", 11)
        c.drawString(margin, y - 5 * mm, group.heading)
        y -= 8 * mm
        for line in group.lines:
            if y - line_h < margin:
                c.showPage()
                y = header(False)
                c.setFont("Helvetica-Oblique", 9)
                c.drawString(margin, y - 4 * mm, f"{group.heading} (continued)")
                y -= 6 * mm
            top = y
            c.drawImage(ImageReader(qr_image(line.url)), margin, top - qr_size, qr_size, qr_size)
            x = margin + qr_size + 4 * mm
            c.rect(x, top - 7 * mm, 4 * mm, 4 * mm)  # tick box for the round
            c.setFont("Courier-Bold", 12)
            c.drawString(x + 6 * mm, top - 6.5 * mm, line.label)
            c.setFont("Helvetica", 9)
            c.drawString(x + 6 * mm, top - 11.5 * mm, f"{line.what} - due {line.due} - {line.note}")
            _fitted(
                c,
                x + 6 * mm,
                top - 16 * mm,
                " - ".join(w for w in (line.where, line.decision) if w),
                width=page_w - margin - (x + 6 * mm),
                size=9,
            )
            c.setFont("Helvetica", 7)
            c.drawString(x + 6 * mm, top - 20 * mm, line.url)
            y -= line_h
    c.showPage()
    c.save()
    return buf.getvalue()
