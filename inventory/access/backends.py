"""Django's ``ModelBackend``, reading a user's permissions in one query instead of two."""

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission

from inventory.db.compiled import CompiledRead

_COLUMNS = ("content_type__app_label", "codename")


def _permission_rows(user_id: int):
    own = Permission.objects.filter(user=user_id).values_list(*_COLUMNS).order_by()
    via_groups = Permission.objects.filter(group__user=user_id).values_list(*_COLUMNS).order_by()
    return own.union(via_groups)


# Compiled once per process and prepared once per connection: PostgreSQL took 1.7 ms to plan the
# union (four joins) and 0.2-1.3 ms to run it, on every request of every page and API call.
_PERMISSIONS = CompiledRead(_permission_rows)


class PermissionsBackend(ModelBackend):
    """Every page and API call checks a permission, so every request read both the user's own
    and their groups' permissions (two round trips). One ``UNION`` gives the same set.

    Only ``get_all_permissions`` (what ``has_perm`` uses) changes; the per-source methods are
    Django's own. The set is cached on the user object for the request, as Django does, and is
    read afresh on the next request (never across requests: a revoked role takes effect at once).
    """

    def get_all_permissions(self, user_obj, obj=None):
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            if user_obj.is_superuser:
                rows = Permission.objects.values_list(*_COLUMNS).order_by()
            else:
                rows = _PERMISSIONS(user_obj.pk)
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in rows}
        return user_obj._perm_cache
