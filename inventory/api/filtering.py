"""The API's filter backend: ``filterset_fields`` FilterSets read yes/no values strictly."""

import django_filters
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

    def filter_queryset(self, request, queryset, view):
        ordering = self.get_ordering(request, queryset, view)
        if not ordering:
            return queryset
        terms = [column_order(queryset.model, t.lstrip("-"), t.startswith("-")) for t in ordering]
        last = "-pk" if ordering[-1].startswith("-") else "pk"
        return queryset.order_by(*terms, *([last] if ordering[-1].lstrip("-") not in ("pk", "id") else []))
