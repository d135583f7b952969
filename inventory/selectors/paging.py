"""Pages of a list whose cost depends on the page, not on the size of the table.

A plain ``Paginator`` counts every matching row to number the pages: ``COUNT(*)`` over 440,000
cables (a 131,072-GPU site) costs more than the page itself, and far more with a filter that
joins. Here the count stops at ``COUNT_CAP`` rows (a ``COUNT(*)`` over a ``LIMIT`` subquery), so
a list numbers at most ``COUNT_CAP / page size`` pages and says "10,000+" past that; the rows
themselves come from an index in the list's order (see the sort indexes of migration
``0011_g_list_indexes``), so a page costs its offset, at most ``COUNT_CAP`` index entries. Past
the numbered pages the API continues by keyset (``?after=<label>``, see
``inventory.api.pagination``): every further page is one index range scan of a page's rows.
"""

from __future__ import annotations

from django.core.paginator import Paginator
from django.utils.functional import cached_property

#: Matching rows counted at most; lists say "10,000+" beyond it and number no further pages.
COUNT_CAP = 10_000
#: The desk lists' cap: some of their filters join or recheck per row (open alert, search), and
#: counting 10,000 rows through the site filter's old join took 130 ms at 131,072 GPUs, more than
#: the page (the site filter now reads an index); 1,000 take a few ms.
DESK_COUNT_CAP = 1_000


class BoundedPaginator(Paginator):
    """Django's ``Paginator`` with a count that stops at ``COUNT_CAP`` (``count_exact`` says whether
    it stopped)."""

    cap = COUNT_CAP

    def __init__(self, object_list, per_page, *, cap: int | None = None, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        if cap is not None:
            self.cap = cap

    @cached_property
    def _bounded(self) -> tuple[int, bool]:
        rows = self.object_list
        if hasattr(rows, "order_by"):  # a queryset: count a LIMIT subquery, in no particular order
            n = rows.order_by()[: self.cap + 1].count()
        else:
            n = len(rows)
        return min(n, self.cap), n <= self.cap

    @cached_property
    def count(self) -> int:
        return self._bounded[0]

    @cached_property
    def count_exact(self) -> bool:
        return self._bounded[1]
