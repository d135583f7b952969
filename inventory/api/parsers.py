"""The API's JSON parser: duplicate keys and over-deep nesting are a 400, like any malformed body."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from inventory.core import strictjson


class StrictJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = (parser_context or {}).get("encoding", "utf-8")
        try:
            return strictjson.loads(stream.read().decode(encoding))
        except (strictjson.StrictJSONError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
