"""The viewset every plant API resource builds on: create, read, update, never delete."""

from rest_framework import mixins, viewsets

from inventory.api.concurrency import OptimisticConcurrencyMixin
from inventory.api.server_owned import ServerOwnedFieldsMixin


class NoDeleteModelViewSet(
    ServerOwnedFieldsMixin,
    OptimisticConcurrencyMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """Create, read, update. Nothing is hard-deleted through the product.

    Reads carry an ``ETag``; writes honour ``If-Match`` (``concurrency.py``); server-owned
    fields are read-only on every serializer (``server_owned.py``).
    """
