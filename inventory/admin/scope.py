"""The site scope in the admin: the one policy (``authz.object_change_allowed``) decides.

Every admin of a model that has a site mixes this in (``tests/.../test_write_scope_table.py``
checks that): a technician (given ``is_staff``) sees another site's objects read-only, and an
add or a change that would leave the object in a site that is not theirs (a new cable end on
another site's port, a device moved into another site's rack) is a 403 that writes nothing
(the admin saves in one transaction; the check runs after the inlines, before it commits).
"""

from inventory.access import authz


class SiteScopedAdmin:
    def has_change_permission(self, request, obj=None):
        if not super().has_change_permission(request, obj):
            return False
        return obj is None or authz.object_change_allowed(request.user, obj)

    def has_delete_permission(self, request, obj=None):
        if not super().has_delete_permission(request, obj):
            return False
        return obj is None or authz.object_change_allowed(request.user, obj)

    def save_model(self, request, obj, form, change):
        # The sites it is in before this change (read from the database: nothing saved yet).
        request._ct_sites_before = authz.site_ids_of(authz.fresh(obj)) if change else frozenset()
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        before = getattr(request, "_ct_sites_before", frozenset())
        authz.check_object_change(request.user, form.instance, before)
