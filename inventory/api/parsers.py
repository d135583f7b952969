"""Request body parsers: JSON with text the database can hold, on every database alike."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def _has_nul(value) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):  # values only: an unknown key is ignored, never stored
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class StrictJSONParser(JSONParser):
    """DRF's JSON parser, refusing the NUL character in any string value.

    PostgreSQL cannot store NUL in text and refuses the statement; SQLite stores it. Refusing it
    when the body is read gives one 400 on both, before any write, for every field (fields that
    are not DRF ``CharField``s, such as slug lists, have no NUL validator of their own).
    """

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if _has_nul(data):
            raise ParseError("JSON text cannot contain the NUL character (\\u0000).")
        return data
