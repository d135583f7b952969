"""The API's filter backend: ``filterset_fields`` FilterSets read yes/no values strictly."""

import re

import django_filters
from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django_filters import rest_framework as drf_filters
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter

from inventory.selectors.filters import StrictBooleanFilter, UtcIsoDateTimeFilter
from inventory.selectors.pages.lists import column_order


class StrictRestFilterSet(drf_filters.FilterSet):
    FILTER_DEFAULTS = {
        **drf_filters.FilterSet.FILTER_DEFAULTS,
        models.BooleanField: {"filter_class": StrictBooleanFilter},
        models.NullBooleanField: {"filter_class": StrictBooleanFilter},
        models.DateTimeField: {"filter_class": UtcIsoDateTimeFilter},
    }


class StrictFilterBackend(drf_filters.DjangoFilterBackend):
    """``?passed=maybe`` is a 400 ("Use true or false."), not a silently ignored filter; so is a
    date, time, number or object filter given with no value (``?changed_since=``, ``?row=``), which the HTML lists'
    forms send for "any" but an API client means as something."""

    filterset_base = StrictRestFilterSet
    _NEEDS_VALUE = (
        django_filters.DateTimeFilter,
        django_filters.DateFilter,
        django_filters.NumberFilter,
        django_filters.ModelChoiceFilter,  # ?row= : an object's id, never "any"
    )

    def get_filterset(self, request, queryset, view):
        filterset = super().get_filterset(request, queryset, view)
        if filterset is None:
            return None
        blank = [
            name
            for name, f in filterset.filters.items()
            if isinstance(f, self._NEEDS_VALUE) and request.query_params.get(name, None) == ""
        ]
        if blank:
            raise ValidationError({name: ["Give a value, or leave the parameter out."] for name in blank})
        return filterset


class BlanksLastOrderingFilter(OrderingFilter):
    """``?ordering=`` as the desk lists sort (``selectors.pages.lists.column_order``): a cable
    never due for a retest, or with no install date, comes after the dated ones in either
    direction, on SQLite (which puts blanks first ascending) as on PostgreSQL (first
    descending); ties are broken by the primary key, in the same direction, so consecutive
    pages neither repeat nor skip a row (and the ``(column, id)`` indexes give the order)."""

    def get_ordering(self, request, queryset, view):
        """The terms as sent, each a field the list sorts by (``-`` first for descending); any
        other term is a 400 naming it and the fields it may be (DRF dropped it and answered in
        the default order, as if the client had asked for that). No value: the default order."""
        params = request.query_params.get(self.ordering_param)
        if not params:
            return self.get_default_ordering(view)
        valid = self._offered(queryset, view, request)
        terms = params.split(",")
        unknown = [term for term in terms if term.removeprefix("-") not in valid]
        if unknown:
            named = ", ".join(repr(term) for term in unknown)
            raise ValidationError(
                {
                    self.ordering_param: [
                        f"This list cannot be sorted by {named}; sort by {', '.join(valid)} ('-' first for "
                        "descending, several separated by commas)."
                    ]
                }
            )
        return terms

    def get_default_valid_fields(self, queryset, view, context=None):
        """DRF offers every serializer field of a list without ``ordering_fields``; only those
        that name one column of each row sort: ``a_port.__str__`` was a 500, a many-valued
        relation (``aliases``) repeated rows across pages."""
        fields = super().get_default_valid_fields(queryset, view, context)
        return [item for item in fields if _one_column(queryset.model, item[0])]

    def _offered(self, queryset, view, request) -> list[str]:
        return sorted(item[0] for item in self.get_valid_fields(queryset, view, {"request": request}))

    def get_schema_operation_parameters(self, view):
        """The schema says what ``get_ordering`` takes: the list's fields, by pattern."""
        params = super().get_schema_operation_parameters(view)
        try:
            valid = self._offered(view.get_queryset(), view, getattr(view, "request", None))
        except Exception:  # a view the generator cannot build a queryset for: the plain string
            return params
        term = "-?(?:" + "|".join(re.escape(f) for f in valid) + ")"
        for param in params:
            param["description"] = (
                f"Sort by {', '.join(valid)}; '-' first for descending, several separated by commas."
            )
            param["schema"] = {"type": "string", "pattern": f"^(?:{term}(?:,{term})*)?$"}
        return params

    def filter_queryset(self, request, queryset, view):
        ordering = self.get_ordering(request, queryset, view)
        if not ordering:
            return queryset
        terms = [column_order(queryset.model, t.lstrip("-"), t.startswith("-")) for t in ordering]
        last = "-pk" if ordering[-1].startswith("-") else "pk"
        return queryset.order_by(*terms, *([last] if ordering[-1].lstrip("-") not in ("pk", "id") else []))


def _one_column(model, path: str) -> bool:
    """``path`` (``rack__name``) follows forward single-valued relations to a stored column."""
    parts = path.split("__")
    for i, name in enumerate(parts):
        try:
            field = model._meta.get_field(name)
        except FieldDoesNotExist:
            return False
        if not field.concrete or field.many_to_many or field.one_to_many:
            return False
        if i < len(parts) - 1:
            if not field.is_relation:
                return False
            model = field.related_model
    return True
