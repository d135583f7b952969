"""User administration for the admin role: accounts and their roles, never an escalation.

Django's ``UserAdmin`` lets whoever may change users set ``is_superuser`` and any per-user
permission, so a user with the admin role (``auth.change_user``, see ``roles.py``) could make
anyone, themselves included, a superuser. Here only a superuser sees and sets those; others manage
accounts through their roles (groups) and may not change a superuser's account at all.
"""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

User = get_user_model()

PRIVILEGED_FIELDS = ("is_superuser", "user_permissions")


class RoleUserAdmin(UserAdmin):
    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if request.user.is_superuser:
            return fieldsets
        return [
            (name, {**opts, "fields": [f for f in opts["fields"] if f not in PRIVILEGED_FIELDS]})
            for name, opts in fieldsets
        ]

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser and super().has_delete_permission(request, obj)


admin.site.unregister(User)
admin.site.register(User, RoleUserAdmin)
