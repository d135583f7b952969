"""The viewset every plant API resource builds on: create, read, update, never delete."""

from django.db import transaction
from rest_framework import mixins, viewsets

from inventory.access import authz
from inventory.api.concurrency import OptimisticConcurrencyMixin
from inventory.api.server_owned import ServerOwnedFieldsMixin
from inventory.services.plant import cable_sites


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

    The site scope (``authz.object_change_allowed``) is asked of the object as it is before a
    change (``PlantPermission``) and as it is after a create or a change, in the request's
    transaction: nobody creates an object in, or moves one into, a site that is not theirs.
    """

    def perform_create(self, serializer):
        super().perform_create(serializer)
        authz.check_object_change(self.request.user, serializer.instance)

    def perform_update(self, serializer):
        before = authz.site_ids_of(serializer.instance)  # as PlantPermission read it
        super().perform_update(serializer)
        authz.check_object_change(self.request.user, serializer.instance, before)


class MovesCablesMixin:
    """For a resource whose update can move cables to another site (a device to another rack; a
    rack, row or room under another parent; a port or cage to another device): the cables' site
    column follows, in the update's transaction."""

    def perform_update(self, serializer):
        key = cable_sites.PARENT_KEYS[type(serializer.instance)]
        before = getattr(serializer.instance, key)
        with transaction.atomic():
            super().perform_update(serializer)
            if getattr(serializer.instance, key) != before:
                cable_sites.cable_sites_refresh_for_moved(serializer.instance)
