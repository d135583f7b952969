"""URL path converters (registered in ``inventory/urls.py``)."""

from inventory.core.names import from_url_segment, url_segment


class NameConverter:
    """A site, rack or device name as one path segment: any name, "/" included (``core.names``).

    ``reverse()`` and ``device_url`` write it; a name without "%" or "/" keeps its plain URL."""

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return from_url_segment(value)

    def to_url(self, value: str) -> str:
        return url_segment(value)
