"""Read printed labels back the way a phone would: rasterise the PDF, decode every QR code."""

from __future__ import annotations

import pypdfium2 as pdfium
import zxingcpp


def decode_pdf(content: bytes, *, dpi: int = 200) -> list[list[str]]:
    """The QR texts found on each page, in reading order (pypdfium2 + zxing-cpp)."""
    pdf = pdfium.PdfDocument(content)
    pages = []
    try:
        for page in pdf:
            image = page.render(scale=dpi / 72, grayscale=True).to_pil()
            found = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
            found.sort(key=lambda r: (r.position.top_left.y // 50, r.position.top_left.x))
            pages.append([r.text for r in found])
            page.close()
    finally:
        pdf.close()
    return pages


def page_texts(content: bytes) -> list[str]:
    pdf = pdfium.PdfDocument(content)
    try:
        # pdfium marks a hyphen that ends a line as U+FFFE; it is a printed "-".
        return [page.get_textpage().get_text_range().replace("\ufffe", "-") for page in pdf]
    finally:
        pdf.close()
