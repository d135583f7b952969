"""The API's filter backend: ``filterset_fields`` FilterSets read yes/no values strictly."""

import django_filters
from django.db import models
from django_filters import rest_framework as drf_filters
from rest_framework.exceptions import ValidationError

from inventory.selectors.filters import StrictBooleanFilter, UtcIsoDateTimeFilter


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
