"""Text fields that take text only.

DRF's ``CharField`` turns a JSON number into a string (``{"slug": 0}`` becomes ``"0"``), so a
client sending the wrong type never hears of it. The schema says ``string``; anything else is a
400 "Not a valid string." (form and multipart values are always strings, so they are unaffected).
"""

from django.db import models
from rest_framework import serializers


class StrictStringMixin:
    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(StrictStringMixin, serializers.CharField):
    pass


class StrictSlugField(StrictStringMixin, serializers.SlugField):
    pass


class StrictEmailField(StrictStringMixin, serializers.EmailField):
    pass


class StrictSlugRelatedField(serializers.SlugRelatedField):
    """A reference by name that refuses the NUL character as ``CharField`` does: PostgreSQL
    cannot compare text with NUL (a 500 there), SQLite simply finds nothing; both answer the
    same 400 naming it."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            raise serializers.ValidationError("Text cannot contain the NUL character.")
        return super().to_internal_value(data)


class StrictModelSerializer(serializers.ModelSerializer):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
        models.SlugField: StrictSlugField,
        models.EmailField: StrictEmailField,
    }
