"""Names people and integrations give to sites, rooms, rows, racks and devices: what they may
contain, and how one travels in a URL. Pure (no Django): the models' validators, the NetBox and
Nautobot sync, the URL converter and the QR labels all read it.

The rule: any printable text up to the field's length, "/" included (NetBox allows it, racks are
named ``S01-G02/B``). Refused: control characters (NUL, CR, LF, tab, DEL, C1 controls, the
Unicode line and paragraph separators), a name that is empty or only spaces, and leading or
trailing spaces. ``NAME_PATTERN`` says the same as a regular expression (the OpenAPI schema
publishes it).

In a page URL a name is one path segment: ``%`` and ``/`` are escaped as ``%25`` and ``%2F``
before the URL itself is quoted (so ``S01-G02/B`` is ``/r/S01-G02%252FB``), because the server
decodes ``%2F`` to ``/`` before routing; the names ``.`` and ``..``, which a browser would
rewrite out of a path, are written ``%2E`` and ``%2E%2E``. A name without ``%`` or ``/`` keeps
the URL it always had: the URLs printed on labels do not change.
"""

from __future__ import annotations

import re
import unicodedata

NAME_RULE = "Printable text: no control characters (line breaks, tabs, NUL), no leading or trailing spaces."

_CONTROL = r"\x00-\x1f\x7f-\x9f\u2028\u2029"
NAME_PATTERN = rf"^[^\s{_CONTROL}](?:[^{_CONTROL}]*[^\s{_CONTROL}])?\Z"


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a name, in words; None when it can."""
    if not isinstance(name, str) or not name.strip():
        return "A name cannot be empty."
    bad = sorted({c for c in name if unicodedata.category(c) in ("Cc", "Zl", "Zp")})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        return f"A name cannot contain control characters or line breaks ({shown})."
    if name != name.strip():
        return "A name cannot start or end with a space."
    return None


def url_segment(name: str) -> str:
    """``name`` as one path segment, before URL quoting (see the module docstring)."""
    if name in (".", ".."):
        return name.replace(".", "%2E")
    return name.replace("%", "%25").replace("/", "%2F")


_ESCAPED = re.compile(r"%(25|2[Ff]|2[Ee])")
_UNESCAPED = {"25": "%", "2F": "/", "2E": "."}


def from_url_segment(segment: str) -> str:
    """The inverse of ``url_segment`` (only its escapes are read)."""
    return _ESCAPED.sub(lambda m: _UNESCAPED[m.group(1).upper()], segment)
