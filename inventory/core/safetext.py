"""Text made safe for the places a line break or a NUL must never reach: a mail header, a file
name, a log line. Pure, ORM-free.

Strings recorded here come from people and machines (a module serial a collector posts, a cable
note, a NetBox name); any of them may carry a CR, LF, NUL or another control character. Python's
mail library refuses a header with a line break (the notice is then never delivered), a header
or ``Content-Disposition`` with one could be split, and a log line with one could forge the next
line. One function decides what such text becomes: each control character (C0, DEL, C1 and the
Unicode line and paragraph separators) is replaced by a space, runs of spaces are collapsed and
the ends stripped.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, and U+2028/U+2029 (line and paragraph separators).
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SPACES = re.compile(" {2,}")


def has_control(text: str) -> bool:
    return bool(CONTROL_CHARS.search(text))


def one_line(text: str, *, limit: int | None = None) -> str:
    """``text`` on one line with no control character: what a mail subject or header gets."""
    if not CONTROL_CHARS.search(text):
        out = text
    else:
        out = _SPACES.sub(" ", CONTROL_CHARS.sub(" ", text)).strip()
    return out[:limit] if limit is not None else out


def log_escaped(text: str) -> str:
    """``text`` for a log line: control characters written as escapes (``\\n``, ``\\x00``) so a
    value cannot start a forged line, and the value stays readable."""
    if not CONTROL_CHARS.search(text):
        return text
    return CONTROL_CHARS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


_FILENAME_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]")


def safe_filename(name: str, *, fallback: str, limit: int = 120) -> str:
    """A file name for ``Content-Disposition``: letters, digits, dot, dash, underscore and space
    only (anything else, control characters and quotes included, becomes ``_``); never empty,
    never a dot file."""
    out = _FILENAME_UNSAFE.sub("_", one_line(name or ""))[:limit].strip(" .")
    return out or fallback
