"""Text that never overflows its box: shrink first, then wrap, then (last resort) ellipsis.

Generic over a ``measure(text, bold) -> width at size 1`` function, so the PDF (points, the
real font metrics) and ZPL (printer dots, a conservative stand-in metric) share one fitter.
Widths scale linearly with the size (no kerning), so every width is measured once at size 1.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reportlab.pdfbase.pdfmetrics import stringWidth

Measure = Callable[[str, bool], float]

# A line's box is LINE_HEIGHT x size; the baseline sits ASCENT x size below its top. Ascent
# and descent cover accented capitals and descenders of Helvetica (0.93 + 0.22 < 1.17).
LINE_HEIGHT = 1.17
ASCENT = 0.93
ELLIPSIS = "\u2026"
_BREAK_AFTER = re.compile(r"(?<=[/\-_.:,])")
FONTS = {False: "Helvetica", True: "Helvetica-Bold"}


class _CharWidths(dict):
    def __init__(self, font: str):
        super().__init__()
        self.font = font

    def __missing__(self, ch: str) -> float:
        w = self[ch] = stringWidth(ch, self.font, 1.0)
        return w


_WIDTHS = {bold: _CharWidths(font) for bold, font in FONTS.items()}


def helvetica_width(text: str, bold: bool) -> float:
    """Width of ``text`` at size 1 in Helvetica (reportlab's metrics; no kerning)."""
    table = _WIDTHS[bold]
    return sum([table[c] for c in text])


@dataclass(frozen=True, slots=True)
class TextSpec:
    text: str
    max_size: float
    min_size: float
    bold: bool = False
    max_lines: int = 2
    wrap_below: float = 1.0  # stay on one line until the scale drops below this (names)
    # Never cut (a label's identifier, and the end it sits on): in the last resort it takes the
    # lines it needs at its smallest size, and the other texts give way.
    whole: bool = False


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    size: float
    bold: bool
    baseline: float  # distance from the block's top edge down to this line's baseline


@dataclass(frozen=True, slots=True)
class Block:
    lines: tuple[Line, ...]
    height: float
    complete: bool  # False if something had to be cut (or dropped) to fit


class _Tokens:
    """A text split into words (at spaces), each measured once at size 1.

    Lines break between words; a word wider than a line breaks after ``/ - _ . : ,`` and,
    failing that, anywhere.
    """

    __slots__ = ("bold", "measure", "words")

    def __init__(self, text: str, bold: bool, measure: Measure):
        self.bold = bold
        self.measure = measure
        self.words = [(w, measure(w, bold)) for w in text.split()]

    def wrap(self, limit: float) -> list[str] | None:
        """Greedy lines no wider than ``limit`` (size-1 units); None if one character is too wide."""
        space = self.measure(" ", self.bold)
        lines: list[str] = []
        cur, cur_w = "", 0.0
        for word, w in self.words:
            if cur and cur_w + space + w <= limit:
                cur, cur_w = f"{cur} {word}", cur_w + space + w
                continue
            if cur:
                lines.append(cur)
            if w <= limit:
                cur, cur_w = word, w
                continue
            pieces = self._break_word(word, limit)
            if pieces is None:
                return None
            lines += pieces[:-1]
            cur = pieces[-1]
            cur_w = self.measure(cur, self.bold)
        if cur:
            lines.append(cur)
        return lines

    def _break_word(self, word: str, limit: float) -> list[str] | None:
        out: list[str] = []
        cur, cur_w = "", 0.0
        for piece in _BREAK_AFTER.split(word):
            if not piece:
                continue
            w = self.measure(piece, self.bold)
            if cur_w + w <= limit:
                cur, cur_w = cur + piece, cur_w + w
                continue
            if cur:
                out.append(cur)
            while w > limit:
                cut, acc = 0, 0.0
                for ch in piece:
                    acc += self.measure(ch, self.bold)
                    if acc > limit:
                        break
                    cut += 1
                if cut == 0:
                    return None
                out.append(piece[:cut])
                piece = piece[cut:]
                w = self.measure(piece, self.bold)
            cur, cur_w = piece, w
        if cur:
            out.append(cur)
        return out or [""]


def wrap(text: str, width: float, size: float, bold: bool, measure: Measure = helvetica_width):
    return _Tokens(text, bold, measure).wrap(width / size)


def _ellipsize(text: str, limit: float, bold: bool, measure: Measure) -> str:
    while text and measure(text + ELLIPSIS, bold) > limit:
        text = text[:-1]
    return text + ELLIPSIS if measure(text + ELLIPSIS, bold) <= limit else ""


def _stack(rows: list[tuple[list[str], TextSpec, float]], complete: bool) -> Block:
    out, top = [], 0.0
    for texts, spec, size in rows:
        for t in texts:
            out.append(Line(t, size, spec.bold, top + ASCENT * size))
            top += LINE_HEIGHT * size
    return Block(tuple(out), top, complete)


def fit_block(
    specs: Sequence[TextSpec], width: float, height: float, measure: Measure = helvetica_width
) -> Block:
    """Lay out ``specs`` top to bottom inside ``width`` x ``height``, largest sizes first.

    All sizes shrink together (scale 1 down to each spec's minimum) until every spec wraps into
    its ``max_lines`` and the block fits the height. If nothing fits even at the minimum,
    lines are cut with an ellipsis and trailing specs dropped: the text never overflows.
    """
    if width <= 0 or height <= 0:
        return Block((), 0.0, not specs)
    tokens = [_Tokens(s.text, s.bold, measure) for s in specs]
    floor = min((s.min_size / s.max_size for s in specs if s.max_size), default=1.0)
    scale = 1.0
    while True:
        rows, total, ok = [], 0.0, True
        for spec, tok in zip(specs, tokens, strict=True):
            size = max(spec.min_size, spec.max_size * scale)
            lines = tok.wrap(width / size)
            allowed = spec.max_lines if scale <= spec.wrap_below else 1
            if lines is None or len(lines) > allowed:
                ok = False
                break
            rows.append((lines, spec, size))
            total += LINE_HEIGHT * size * len(lines)
            if total > height:
                ok = False
                break
        if ok:
            return _stack(rows, True)
        if scale <= floor:
            break
        scale = max(floor, scale * 0.9)
    # Last resort: minimum sizes, cut to max_lines with an ellipsis (a ``whole`` text keeps every
    # line), then shorten what still does not fit: a line at a time from the text with the most
    # lines (the lowest of equals), so no end loses all of its words while another keeps three;
    # a text down to one line is dropped from the bottom up. A ``whole`` text is cut only when it
    # alone is taller than the box.
    rows, cut_any = [], False
    for spec, tok in zip(specs, tokens, strict=True):
        size = spec.min_size
        lines = tok.wrap(width / size)
        if lines is None or (len(lines) > spec.max_lines and not spec.whole):
            cut_any = True
            lines = (lines or [])[: spec.max_lines]
            if lines:
                lines[-1] = _ellipsize(lines[-1], width / size, spec.bold, measure)
        rows.append(([t for t in lines if t], spec, size))

    def total() -> float:
        return sum(LINE_HEIGHT * size * len(lines) for lines, _, size in rows)

    while rows and total() > height:
        cut_any = True
        shorter = [i for i, (lines, spec, _) in enumerate(rows) if not spec.whole and len(lines) > 1]
        if shorter:
            i = max(shorter, key=lambda i: (len(rows[i][0]), i))
            lines, spec, size = rows[i]
            cut = lines[:-1]
            cut[-1] = _ellipsize(cut[-1], width / size, spec.bold, measure)
            rows[i] = ([t for t in cut if t], spec, size)
            continue
        droppable = [i for i, (_, spec, _) in enumerate(rows) if not spec.whole]
        i = droppable[-1] if droppable else len(rows) - 1
        lines, spec, size = rows[i]
        if len(lines) > 1:
            rows[i] = (lines[:-1], spec, size)
        else:
            rows.pop(i)
    return _stack(rows, not cut_any)
