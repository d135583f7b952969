"""Request body parsers: DRF's JSON parser with a nesting bound.

Python's ``json`` raises ``RecursionError`` (not ``ValueError``) on a document nested past the
interpreter's recursion limit, so DRF's parser let ``[[[[...]]]]`` 100,000 deep escape as a 500.
No body this API takes nests more than a few levels: past the limit it is a 400.
"""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
