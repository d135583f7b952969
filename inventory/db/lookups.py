"""``field__any=[...]``: membership in a long list as ONE array parameter on PostgreSQL.

``field__in=[5,000 ids]`` makes Django prepare every value and psycopg split a query with 5,000
placeholders: about 0.3 s of CPU per such query in a 5,000-row cable-plan import. On
PostgreSQL ``any`` sends ``col = ANY(%s)`` with the list as one array parameter (values must
already be of the column's Python type: ids, strings); elsewhere it behaves as ``in``.
"""

import psycopg
from django.db import connection
from django.db.models import Field, ForeignObject
from django.db.models.lookups import In
from psycopg.adapt import Dumper

from inventory.db.copy import pg_array


class IdArray(list):
    """Integers bound as one ``bigint[]`` parameter, sent as its text literal.

    psycopg's list dumper adapts each element on its own (a dumper lookup and a regular-expression
    test per element): a desk-list page of 50 trunks binds nine lists of some 1,200 ids for its
    decisions, and that adaptation took 11 ms of the page's 60 at 131,072 GPUs; the literal
    (orjson's text with braces) takes well under a millisecond."""


class _IdArrayDumper(Dumper):
    oid = psycopg.postgres.types["int8"].array_oid

    def dump(self, obj: IdArray) -> bytes:
        return pg_array(obj)


# Registered on psycopg's global map, which Django's connections are made from.
psycopg.adapters.register_dumper(IdArray, _IdArrayDumper)


_INT8 = range(-(2**63), 2**63)


def _bound(values: list):
    """The list as it is bound: integers (not booleans) that fit ``bigint`` as an ``IdArray``;
    anything else, such as labels or an id past ``bigint`` from a query string, through
    psycopg's own list adaptation (which compares it as ``numeric`` and finds nothing)."""
    if values and all(type(v) is int for v in values) and min(values) in _INT8 and max(values) in _INT8:
        return IdArray(values)
    return values


@Field.register_lookup
class AnyOf(In):
    lookup_name = "any"

    def get_prep_lookup(self):
        if connection.vendor == "postgresql" and isinstance(self.rhs, (list, tuple, set, frozenset)):
            return [v for v in self.rhs if v is not None]
        return super().get_prep_lookup()

    def as_postgresql(self, compiler, connection):
        if not isinstance(self.rhs, list):
            return super().as_sql(compiler, connection)
        lhs, lhs_params = self.process_lhs(compiler, connection)
        return f"{lhs} = ANY(%s)", (*lhs_params, _bound(self.rhs))


@Field.register_lookup
class InArray(In):
    """``field__in_array=<small queryset>``: membership in a subquery's ids, read first.

    On PostgreSQL ``col = ANY(ARRAY(subquery))``: the subquery runs once (an InitPlan) and the
    planner looks its ids up through the column's index, where ``IN (subquery)`` lets it guess
    the subquery's size and join (a network rack's cable ends on its cages by a hash join over
    every end of the plant: 18 -> 3 ms at 4,096 GPUs). Only for subqueries of a few thousand
    rows (a rack's ports); elsewhere it is ``in``.
    """

    lookup_name = "in_array"

    def as_postgresql(self, compiler, connection):
        if self.rhs_is_direct_value():
            return super().as_sql(compiler, connection)
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        if not rhs.startswith("("):
            rhs = f"({rhs})"
        return f"{lhs} = ANY(ARRAY{rhs})", (*lhs_params, *rhs_params)


# Foreign keys keep their own lookup table (ids compared on the key's column, same SQL).
ForeignObject.register_lookup(AnyOf)
ForeignObject.register_lookup(InArray)
