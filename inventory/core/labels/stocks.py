"""Label stocks as data. A new stock is one ``Stock(...)`` entry in ``STOCKS``.

Dimensions are millimetres, measured from the label's top-left corner. A label has one or
more printable ``faces``: each face gets the whole label content (a flag label's two faces
stick back to back around the cable, so it reads from both sides). ``sheet`` lays labels out
in a grid on a page (A4/Letter sheets); without it the stock is a roll, one label per page
(and per ZPL ``^XA..^XZ`` format).
"""

from __future__ import annotations

from dataclasses import dataclass

MM = 72 / 25.4  # PDF points per millimetre


@dataclass(frozen=True)
class Face:
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Sheet:
    width: float  # page, mm
    height: float
    cols: int
    rows: int
    left: float  # first label's top-left corner on the page
    top: float
    pitch_x: float  # label-to-label distance
    pitch_y: float


@dataclass(frozen=True)
class Stock:
    key: str
    title: str
    width: float  # one label, mm
    height: float
    faces: tuple[Face, ...]
    sheet: Sheet | None = None
    padding: float = 1.2  # mm kept clear inside each face
    qr_max: float = 22.0  # largest QR side, mm (quiet zone included)
    folds: tuple[float, ...] = ()  # x (mm) of fold lines printed as light guides
    use: str = ""

    @property
    def per_page(self) -> int:
        return self.sheet.cols * self.sheet.rows if self.sheet else 1


def _whole(w: float, h: float) -> tuple[Face, ...]:
    return (Face(0, 0, w, h),)


STOCKS: dict[str, Stock] = {
    s.key: s
    for s in (
        # Thin 2-3 mm fibre: a wrap-around QR curves and fails to scan, a flag stays flat.
        # Two 44.45 mm faces either side of a 12.7 mm wrap zone that goes round the cable.
        Stock(
            key="flag",
            title="Flag label 101.6 x 25.4 mm (thin fibre, 2-3 mm)",
            width=101.6,
            height=25.4,
            faces=(Face(0, 0, 44.45, 25.4), Face(57.15, 0, 44.45, 25.4)),
            folds=(44.45, 57.15),
            # 15 mm (not the 21 mm the height allows): the ends and the latest test then fit at
            # 6 pt or more; a 37-module code still has 0.4 mm modules, read at phone distance.
            qr_max=15.0,
            use="cable",
        ),
        # Thicker cables (DAC, AOC, trunks): print zone on top, clear laminating tail below.
        Stock(
            key="wrap",
            title="Wrap-around self-laminating 50.8 x 76.2 mm (print zone 50.8 x 25.4 mm)",
            width=50.8,
            height=76.2,
            faces=(Face(0, 0, 50.8, 25.4),),
            qr_max=21.0,
            use="cable",
        ),
        # Avery L7160-style A4 sheet: 3 x 7 labels of 63.5 x 38.1 mm.
        Stock(
            key="a4",
            title="A4 sheet, 3 x 7 labels of 63.5 x 38.1 mm",
            width=63.5,
            height=38.1,
            faces=_whole(63.5, 38.1),
            sheet=Sheet(210, 297, cols=3, rows=7, left=7.25, top=15.15, pitch_x=66.04, pitch_y=38.1),
            padding=2.0,
            qr_max=26.0,
            use="any",
        ),
        # Avery 5161-style US Letter sheet: 2 x 10 labels of 101.6 x 25.4 mm.
        Stock(
            key="letter",
            title="US Letter sheet, 2 x 10 labels of 101.6 x 25.4 mm",
            width=101.6,
            height=25.4,
            faces=_whole(101.6, 25.4),
            sheet=Sheet(215.9, 279.4, cols=2, rows=10, left=3.97, top=12.7, pitch_x=104.78, pitch_y=25.4),
            padding=1.5,
            qr_max=23.0,
            use="any",
        ),
        # Rack door / top label.
        Stock(
            key="rack",
            title="Rack label 101.6 x 50.8 mm",
            width=101.6,
            height=50.8,
            faces=_whole(101.6, 50.8),
            padding=3.0,
            qr_max=44.0,
            use="rack",
        ),
    )
}
DEFAULT_CABLE_STOCK = "flag"
DEFAULT_RACK_STOCK = "rack"


def get_stock(key: str) -> Stock:
    try:
        return STOCKS[key]
    except KeyError:
        raise ValueError(f"Unknown label stock {key!r}; choose one of: {', '.join(STOCKS)}") from None
