"""Column types for telemetry storage that work on PostgreSQL and on SQLite alike.

* ``UnsignedCounterField``: an unsigned 64-bit counter in a signed ``bigint``, stored with an
  offset of -2**63 (the sign bit flipped). Order and differences are preserved, so
  ``stored_b - stored_a == b - a`` and comparisons need no decoding; the full range
  0 .. 2**64-1 fits, and it costs 8 bytes where ``NUMERIC(20)`` costs 12-16 and is slower to
  COPY and compare (measured: see README, "Telemetry storage").
* ``FloatArrayField`` / ``BigIntArrayField``: a per-lane list or histogram counts.
  PostgreSQL ``real[]`` / ``bigint[]``; SQLite a comma-separated text (no JSON) in which a
  missing lane is ``null``, so ``[None]`` and ``[]`` stay apart (an empty item, as older rows
  wrote a missing lane, still reads as ``None``).
"""

from __future__ import annotations

from django.db import models

U64_OFFSET = 1 << 63
U64_MAX = (1 << 64) - 1


def u64_encode(value: int | None) -> int | None:
    """Unsigned counter -> its stored signed value."""
    return None if value is None else value - U64_OFFSET


def u64_decode(value: int | None) -> int | None:
    return None if value is None else value + U64_OFFSET


class UnsignedCounterField(models.BigIntegerField):
    description = "Unsigned 64-bit counter (stored offset by -2**63 in a bigint)"

    def from_db_value(self, value, expression, connection):
        return u64_decode(value)

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return u64_encode(value)

    def to_python(self, value):
        return None if value is None else int(value)


NULL_ITEM = "null"


def array_to_text(values, cast=float) -> str:
    """A lane list as SQLite stores it: ``[1.5, None]`` -> ``"1.5,null"``; ``[]`` -> ``""``."""
    return ",".join(NULL_ITEM if v is None else repr(cast(v)) for v in values)


def array_from_text(text: str, cast=float) -> list:
    return [None if v in ("", NULL_ITEM) else cast(v) for v in text.split(",")] if text else []


class _ArrayField(models.Field):
    pg_type = ""
    cast = staticmethod(float)

    def db_type(self, connection):
        return self.pg_type if connection.vendor == "postgresql" else "text"

    def get_db_prep_value(self, value, connection, prepared=False):
        if value is None:
            return None
        if connection.vendor == "postgresql":
            return [None if v is None else self.cast(v) for v in value]
        return array_to_text(value, self.cast)

    def from_db_value(self, value, expression, connection):
        if value is None or isinstance(value, list):
            return value
        return array_from_text(value, self.cast)

    def to_python(self, value):
        if value is None or isinstance(value, list):
            return value
        return self.from_db_value(value, None, None)


class FloatArrayField(_ArrayField):
    description = "List of floats (real[] on PostgreSQL)"
    pg_type = "real[]"
    cast = staticmethod(float)


class BigIntArrayField(_ArrayField):
    description = "List of 64-bit integers (bigint[] on PostgreSQL)"
    pg_type = "bigint[]"
    cast = staticmethod(int)
