"""Django's ``ModelBackend``, reading a user's permissions in one query instead of two."""

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission


class PermissionsBackend(ModelBackend):
    """Every page and API call checks a permission, so every request read both the user's own
    and their groups' permissions (two round trips). One ``UNION`` gives the same set.

    Only ``get_all_permissions`` (what ``has_perm`` uses) changes; the per-source methods are
    Django's own. The set is cached on the user object for the request, as Django does.
    """

    def get_all_permissions(self, user_obj, obj=None):
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            cols = ("content_type__app_label", "codename")
            if user_obj.is_superuser:
                rows = Permission.objects.values_list(*cols).order_by()
            else:
                own = Permission.objects.filter(user=user_obj).values_list(*cols).order_by()
                via_groups = Permission.objects.filter(group__user=user_obj).values_list(*cols).order_by()
                rows = own.union(via_groups)
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in rows}
        return user_obj._perm_cache
