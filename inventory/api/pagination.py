"""API pages: numbered pages with a bounded count, then keyset pages past the count's cap.

``count`` is exact up to ``COUNT_CAP`` matching rows (``count_exact: true``); beyond it, it
says ``COUNT_CAP`` and ``count_exact: false``, and numbered pages stop there. A list that names a
``keyset_field`` (the cables: ``label``) also pages by keyset, ``?after=<value>`` in its default
order: one index range scan per page however deep, no count. The ``next`` link of the last
numbered page of a capped list is such a keyset link, so a client that follows ``next`` links
still reads every row.
"""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from inventory.core.validators import is_whole_number
from inventory.selectors.paging import BoundedPaginator


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 1000
    django_paginator_class = BoundedPaginator
    after_query_param = "after"

    def get_page_size(self, request):
        """DRF ignores a ``page_size`` it cannot read; a client that asked for one gets a 400."""
        raw = request.query_params.get(self.page_size_query_param)
        if raw is not None and not (is_whole_number(raw) and int(raw) >= 1):
            raise ValidationError(
                {self.page_size_query_param: [f"A whole number from 1 to {self.max_page_size}."]}
            )
        return super().get_page_size(request)

    def _keyset_field(self, request, view) -> str | None:
        """The view's keyset column, when the request keeps the default order."""
        field = getattr(view, "keyset_field", None)
        return field if field and not request.query_params.get("ordering") else None

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.keyset_field = self._keyset_field(request, view)
        self.keyset_rows = None
        after = request.query_params.get(self.after_query_param)
        if after is None:
            self.page_rows = super().paginate_queryset(queryset, request, view)
            return self.page_rows
        if self.keyset_field is None:
            raise ValidationError(
                {self.after_query_param: ["This list pages by keyset only in its default order."]}
            )
        if request.query_params.get(self.page_query_param):
            raise ValidationError({self.after_query_param: ["Give either page or after, not both."]})
        size = self.get_page_size(request)
        field = self.keyset_field
        # The list's own order up to the keyset column stays in front (the cables of one site
        # sort by the site first: ``CableViewSet.filter_queryset``).
        order = list(queryset.query.order_by)
        lead = order[: order.index(field)] if field in order else []
        rows = list(queryset.filter(**{f"{field}__gt": after}).order_by(*lead, field)[: size + 1])
        self.keyset_more = len(rows) > size
        self.keyset_rows = rows[:size]
        return self.keyset_rows

    def _after_link(self, rows) -> str | None:
        if not rows:
            return None
        url = remove_query_param(self.request.build_absolute_uri(), self.page_query_param)
        return replace_query_param(url, self.after_query_param, getattr(rows[-1], self.keyset_field))

    def get_next_link(self):
        if self.keyset_rows is not None:
            return self._after_link(self.keyset_rows) if self.keyset_more else None
        if self.page.has_next():
            return super().get_next_link()
        if not self.page.paginator.count_exact and self.keyset_field:
            return self._after_link(self.page_rows)  # past the numbered pages
        return None

    def get_previous_link(self):
        return None if self.keyset_rows is not None else super().get_previous_link()

    def get_paginated_response(self, data):
        if self.keyset_rows is not None:
            count, exact = None, False
        else:
            count, exact = self.page.paginator.count, self.page.paginator.count_exact
        return Response(
            {
                "count": count,
                "count_exact": exact,
                "next": self.get_next_link(),
                "previous": self.get_previous_link(),
                "results": data,
            }
        )

    def get_paginated_response_schema(self, schema):
        out = super().get_paginated_response_schema(schema)
        out["properties"]["count"].update(
            nullable=True,
            description="Matching rows, at most 10,000 (see count_exact); null on a keyset page.",
        )
        out["properties"]["count_exact"] = {
            "type": "boolean",
            "description": "False when the list has more rows than count says.",
        }
        return out

    def get_schema_operation_parameters(self, view):
        params = super().get_schema_operation_parameters(view)
        for p in params:
            if p["name"] == self.page_size_query_param or p["name"] == self.page_query_param:
                p["schema"].update(minimum=1)
        field = getattr(view, "keyset_field", None)
        if field:
            params.append(
                {
                    "name": self.after_query_param,
                    "required": False,
                    "in": "query",
                    "description": f"Keyset page: the rows after this {field}, in {field} order "
                    "(the `next` link past the numbered pages).",
                    "schema": {"type": "string"},
                }
            )
        return params
