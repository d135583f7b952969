"""Where things go on a face, and what text a label carries (shared by PDF and ZPL)."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.core.labels.model import CableLabel, Label, RackLabel
from inventory.core.labels.stocks import Face, Stock
from inventory.core.labels.text import TextSpec

QUIET_MODULES = 2  # quiet zone kept inside the QR square, each side (the padding adds more)


@dataclass(frozen=True, slots=True)
class FaceLayout:
    """Millimetres from the label's top-left corner."""

    qr_x: float
    qr_y: float
    qr_side: float  # quiet zone included
    text_x: float
    text_y: float
    text_w: float
    text_h: float


def face_layout(stock: Stock, face: Face) -> FaceLayout:
    p = stock.padding
    side = max(0.0, min(face.h - 2 * p, stock.qr_max, face.w * 0.55))
    return FaceLayout(
        qr_x=face.x + p,
        qr_y=face.y + (face.h - side) / 2,
        qr_side=side,
        text_x=face.x + p + side,
        text_y=face.y + p,
        text_w=face.w - 2 * p - side,
        text_h=face.h - 2 * p,
    )


# No printed line is smaller than this (points): the end text must read in a dim aisle. What
# does not fit at this size is wrapped, then cut with an ellipsis, never shrunk further.
MIN_PT = 6.0
TESTS_BEHIND_QR = "Tests: scan"
HERE = "\u00bb"  # "»" marks the end this label sits on (bold too in the PDF; ZPL has one weight)


def _end_specs(label: CableLabel, stock: Stock) -> list[TextSpec]:
    big = stock.key in ("rack", "a4")
    id_size, line_size, foot_size = (16, 9, 7.5) if big else (12, 7.5, 6.5)
    b_here = label.this_end.startswith("B")
    # What does not go stale: the install date; the tests are behind the QR code.
    foot = [f"Inst {label.installed:%Y-%m-%d}" if label.installed else "", TESTS_BEHIND_QR]
    a_mark, b_mark = (HERE, "") if not b_here else ("", HERE)
    return [
        TextSpec(
            f"{label.identifier} \u00b7 {label.this_end}",
            id_size,
            max(MIN_PT, 7.0),
            bold=True,
            max_lines=2,
            wrap_below=0.6,
            whole=True,  # the label and its end, read whole (A and B labels differ here only)
        ),
        TextSpec(f"{a_mark}A {label.a.text()}", line_size, MIN_PT, bold=not b_here, max_lines=3),
        TextSpec(f"{b_mark}B {label.b.text()}", line_size, MIN_PT, bold=b_here, max_lines=3),
        TextSpec("  ".join(p for p in foot if p), foot_size, MIN_PT, max_lines=2),
    ]


def text_specs(label: Label, stock: Stock) -> list[TextSpec]:
    """The lines of a label, sizes in points (largest wanted, smallest allowed)."""
    if isinstance(label, RackLabel):
        specs = [TextSpec(label.name, 40, 8, bold=True, max_lines=2, wrap_below=0.5)]
        if label.location:
            specs.append(TextSpec(label.location, 11, MIN_PT, max_lines=3))
        return specs
    return _end_specs(label, stock)
