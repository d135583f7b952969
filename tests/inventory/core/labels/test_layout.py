"""Label layout, without a database: what is printed, where, and that it scans."""

import re
from datetime import date

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_raw
import pytest

from inventory.core.labels import (
    STOCKS,
    CableLabel,
    EndInfo,
    RackLabel,
    render_pdf,
    render_zpl,
)
from inventory.core.labels.layout import MIN_PT, face_layout
from inventory.core.labels.stocks import MM
from inventory.core.labels.text import TextSpec, fit_block, helvetica_width
from inventory.core.labels.zpl import BQ_TOP_OFFSET, qr_modules
from inventory.core.links import cable_url, rack_url
from tests.qrscan import decode_pdf, page_texts

BASE = "https://cabletrack.example.com"


def cable(ident="C000123", end="A", **kw):
    defaults = dict(
        identifier=ident,
        url=cable_url(ident.split("-")[0] if end.startswith("B") and end != "B" else ident, base_url=BASE),
        this_end=end,
        a=EndInfo("R01", 12, "gpu-node-0001", "eth0", cage="OSFP1"),
        b=EndInfo("R40", 40, "leaf-01", "Ethernet1/1", cage="OSFP1"),
        installed=date(2025, 3, 1),
    )
    defaults.update(kw)
    return CableLabel(**defaults)


LONG = "spine-hall7-row12-rack34-" + "verylongdevicename" * 6
NASTY = [
    cable(ident="C" + "9" * 63, a=EndInfo("R" * 64, 48, LONG, "Ethernet" + "1/" * 30 + "1")),
    cable(ident="WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW", end="B", b=EndInfo("MMMMMMMM", 1, "W" * 90, "WWWWWWWW")),
    cable(
        ident="Ärger-Kabel_ÉÖ^~", a=EndInfo("Raum-Ü", 3, "Gerät mit Leerzeichen und Umlauten äöü", "port 1")
    ),
    cable(ident="x", a=EndInfo(), b=EndInfo(), installed=None),
]


def _char_boxes(content: bytes):
    pdf = pdfium.PdfDocument(content)
    try:
        for index, page in enumerate(pdf):
            tp = page.get_textpage()
            for i in range(tp.count_chars()):
                ch = tp.get_text_range(i, 1)
                if ch.strip():
                    yield index, ch, tp.get_charbox(i), page.get_height()
    finally:
        pdf.close()


def _text_rects(stock, page_height):
    """Every text area (in PDF points, bottom-left origin) of every label cell on a page."""
    cells = [(0.0, page_height)]
    if stock.sheet:
        s = stock.sheet
        cells = [
            ((s.left + c * s.pitch_x) * MM, page_height - (s.top + r * s.pitch_y) * MM)
            for r in range(s.rows)
            for c in range(s.cols)
        ]
    rects = []
    for x0, top in cells:
        for face in stock.faces:
            lay = face_layout(stock, face)
            left = x0 + lay.text_x * MM
            upper = top - lay.text_y * MM
            rects.append((left, upper - lay.text_h * MM, left + lay.text_w * MM, upper))
    return rects


@pytest.mark.parametrize("stock_key", sorted(STOCKS))
def test_long_text_shrinks_or_wraps_and_never_leaves_its_box(stock_key):
    """Every glyph of every label, however long its names, lies inside its face's text area
    (never over the QR code, never off the label)."""
    stock = STOCKS[stock_key]
    labels = [*NASTY, RackLabel(name="RACK-" + "Z" * 60, url=rack_url("R", base_url=BASE), location=LONG)]
    content = render_pdf(labels, stock)
    checked = 0
    rects_by_height = {}
    for _, ch, (left, bottom, right, top), height in _char_boxes(content):
        rects = rects_by_height.setdefault(height, _text_rects(stock, height))
        tol = 0.25
        inside = any(
            left >= r[0] - tol and right <= r[2] + tol and bottom >= r[1] - tol and top <= r[3] + tol
            for r in rects
        )
        assert inside, f"{ch!r} at {(left, bottom, right, top)} overflows on {stock_key}"
        checked += 1
    assert checked > 100
    texts = " ".join(page_texts(content))
    assert "C9999" in texts and "RACK-" in texts  # shrunk or cut, the identifiers are still there


def test_ordinary_labels_print_every_fact_at_full_length():
    content = render_pdf([cable(), cable(end="B")], STOCKS["flag"])
    first, second = page_texts(content)
    for fact in (
        "C000123",
        "R01 U12",
        "gpu-node-0001 OSFP1 eth0",
        "R40 U40",
        "leaf-01 OSFP1 Ethernet1/1",
        "Inst 2025-03-01",
        "Tests: scan",
    ):
        assert fact in first.replace("\r\n", " ").replace("\n", " ")
    assert "· A" in first and "· B" in second


def test_fitter_shrinks_before_it_wraps_and_wraps_before_it_cuts():
    measure = helvetica_width
    spec = TextSpec("gpu-node-0001 Ethernet1/1", 10, 4, max_lines=2)
    wide = fit_block([spec], 200, 50, measure)
    assert [line.text for line in wide.lines] == ["gpu-node-0001 Ethernet1/1"] and wide.lines[0].size == 10
    narrow = fit_block([spec], 60, 50, measure)
    assert len(narrow.lines) == 2 and narrow.complete
    tiny = fit_block([spec], 20, 5, measure)
    assert not tiny.complete
    for line in [*narrow.lines, *tiny.lines]:
        assert measure(line.text, False) * line.size <= 60
    assert tiny.height <= 5


@pytest.mark.parametrize("stock_key", ["flag", "wrap", "a4", "letter", "rack"])
def test_every_qr_code_decodes_to_its_url(stock_key):
    labels = [cable(ident=f"C{i:06d}", end=end) for i in range(4) for end in "AB"]
    labels.append(RackLabel(name="R07", url=rack_url("R07", base_url=BASE), location="Site · Hall · Row A"))
    pages = decode_pdf(render_pdf(labels, STOCKS[stock_key]), dpi=200 if stock_key != "flag" else 150)
    found = [url for page in pages for url in page]
    faces = len(STOCKS[stock_key].faces)
    expected = [lab.url for lab in labels for _ in range(faces)]
    assert sorted(found) == sorted(expected)


ZPL_FIELD = re.compile(r"\^FO(\d+),(\d+)(\^A0N,(\d+),(\d+)|\^BQN,2,(\d+))\^FH\^FD(.*?)\^FS")


def _unhex(s: str) -> str:
    return re.sub(rb"_([0-9A-F]{2})", lambda m: bytes([int(m.group(1), 16)]), s.encode()).decode("utf-8")


@pytest.mark.parametrize("stock_key", sorted(STOCKS))
@pytest.mark.parametrize("dpi", [203, 300])
def test_zpl_has_the_right_data_and_stays_within_the_label(stock_key, dpi):
    stock = STOCKS[stock_key]
    labels = [cable(), *NASTY, RackLabel(name="R07", url=rack_url("R07", base_url=BASE), location=LONG)]
    zpl = render_zpl(labels, stock, dpi=dpi)
    formats = re.findall(r"\^XA.*?\^XZ", zpl, re.S)
    assert len(formats) == len(labels)
    for label, fmt in zip(labels, formats, strict=True):
        pw = int(re.search(r"\^PW(\d+)", fmt).group(1))
        ll = int(re.search(r"\^LL(\d+)", fmt).group(1))
        assert pw == round(stock.width * dpi / 25.4) and ll == round(stock.height * dpi / 25.4)
        qrs, texts = [], []
        for x, y, _, h, w, mag, data in ZPL_FIELD.findall(fmt):
            x, y = int(x), int(y)
            if mag:
                size = qr_modules(label.url) * int(mag)
                assert x + size <= pw and y + BQ_TOP_OFFSET + size <= ll
                qrs.append(_unhex(data))
            else:
                text = _unhex(data)
                assert helvetica_width(text, True) * int(w) <= pw - x
                assert y + int(h) <= ll
                texts.append(text)
        assert qrs == [f"QA,{label.url}"] * len(stock.faces)
        assert "^" not in "".join(texts) or "_5E" in fmt  # a caret in a name is escaped, never a command
        first = label.identifier if isinstance(label, CableLabel) else label.name
        assert texts and texts[0].startswith(first[:1])
    assert "^FH^FDQA,https://cabletrack.example.com/c/C000123^FS" in zpl


# A demo-sized cable: the names a real hall prints (rack, U, device, cage, logical port).
HALL = dict(
    a=EndInfo("S01-G01", 2, "gpu-0001", "eth0", cage="OSFP1"),
    b=EndInfo("S01-N01", 1, "leaf-s01-r1", "Ethernet17/1", cage="OSFP17"),
)


def _font_sizes(content: bytes) -> list[float]:
    """The font size of every printed glyph, read back from the PDF itself (pdfium)."""
    pdf = pdfium.PdfDocument(content)
    sizes = []
    try:
        for page in pdf:
            tp = page.get_textpage()
            sizes += [
                pdfium_raw.FPDFText_GetFontSize(tp.raw, i)
                for i in range(tp.count_chars())
                if tp.get_text_range(i, 1).strip()
            ]
    finally:
        pdf.close()
    return sizes


@pytest.mark.parametrize("stock_key", sorted(STOCKS))
def test_smallest_printed_font_on_each_stock_is_at_least_6_pt(stock_key):
    """Measured from the PDF: no line of any label (long names included) is under 6 pt."""
    labels = [
        cable(**HALL),
        cable(end="B", **HALL),
        *NASTY,
        RackLabel(name="R07", url=rack_url("R07", base_url=BASE), location=LONG),
    ]
    sizes = _font_sizes(render_pdf(labels, STOCKS[stock_key]))
    assert len(sizes) > 100
    assert min(sizes) >= MIN_PT - 0.01, f"{stock_key}: smallest font {min(sizes):.2f} pt"


@pytest.mark.parametrize("stock_key", ["flag", "wrap", "a4", "letter"])
def test_a_hall_label_holds_both_ends_and_the_install_date_whole_at_6_pt(stock_key):
    """Every cable stock holds a real hall's label whole (no ellipsis): the cage and the port of
    both ends, the install date and where the tests are (behind the QR code)."""
    text = page_texts(render_pdf([cable(**HALL)], STOCKS[stock_key]))[0].replace("\r\n", " ")
    assert "\u2026" not in text
    for fact in (
        "S01-G01 U2",
        "gpu-0001 OSFP1 eth0",
        "leaf-s01-r1",
        "OSFP17 Ethernet17/1",
        "Inst 2025-03-01",
        "Tests: scan",
    ):
        assert fact in text, (stock_key, fact, text)


def test_the_end_a_label_sits_on_is_marked_in_pdf_and_zpl():
    a, b = cable(**HALL), cable(end="B", **HALL)
    texts = [t.replace("\r\n", " ") for t in page_texts(render_pdf([a, b], STOCKS["flag"]))]
    assert "\u00bbA S01-G01" in texts[0] and "\u00bbB" not in texts[0]
    assert "\u00bbB S01-N01" in texts[1] and "\u00bbA" not in texts[1]
    formats = re.findall(r"\^XA.*?\^XZ", render_zpl([a, b], STOCKS["flag"]), re.S)
    lines = [[_unhex(d) for *_, mag, d in ZPL_FIELD.findall(fmt) if not mag] for fmt in formats]
    assert any(t.startswith("\u00bbA ") for t in lines[0]) and not any(
        t.startswith("\u00bbB") for t in lines[0]
    )
    assert any(t.startswith("\u00bbB ") for t in lines[1]) and not any(
        t.startswith("\u00bbA") for t in lines[1]
    )


@pytest.mark.parametrize("stock_key", ["flag", "wrap", "a4", "letter"])
def test_the_longest_label_a_cable_may_have_is_printed_whole_with_its_end(stock_key):
    """A cable label may be 64 characters (``LABEL_RE``): the printed identifier is read whole,
    with the end it sits on ("· A", "· B", the only text its two labels differ in), on every stock;
    the ends' words give way, never all of an end's."""
    ident = "TRUNK-HALL1-ROW01-RACK02-TO-HALL2-ROW09-RACK17-MPO24-0000041.AB1"
    assert len(ident) == 64
    for end in "AB":
        text = page_texts(render_pdf([cable(ident=ident, end=end, **HALL)], STOCKS[stock_key]))[0]
        squeezed = re.sub(r"\s", "", text)
        assert f"{ident}\u00b7{end}" in squeezed, (stock_key, text)
        assert "AS01-G01" in squeezed and "BS01-N01" in squeezed, (stock_key, text)
        zpl = render_zpl([cable(ident=ident, end=end, **HALL)], STOCKS[stock_key])
        printed = "".join(_unhex(d) for *_, mag, d in ZPL_FIELD.findall(zpl) if not mag)
        assert f"{ident}\u00b7{end}" in re.sub(r"\s", "", printed), (stock_key, printed)
