"""Fail-closed writes on the HTML side.

Every unsafe request (POST, PUT, PATCH, DELETE) to a page is refused with 403 unless the view
declares what it needs (``@authz.requires_action(...)``, which checks it, or
``@authz.allow_any_user_write`` for a user's own profile) or the user holds at least one write
permission (anyone but a viewer). So a page added later can never be written through by a viewer,
even if its author forgot the check. The API (DRF permissions), the admin (model admin
permissions) and the login/logout forms are left to their own checks.
"""

from django.core.exceptions import PermissionDenied

from inventory.access import authz

SAFE = {"GET", "HEAD", "OPTIONS", "TRACE"}


class WriteGuardMiddleware:
    exempt_prefixes = ("/api/", "/admin/", "/login/", "/logout/", "/metrics")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.method in SAFE or request.path_info.startswith(self.exempt_prefixes):
            return None
        declared = getattr(view_func, "required_action", None) or getattr(
            getattr(view_func, "view_class", None), "required_action", None
        )
        if declared:
            return None  # the view checks its own action (requires_action) or is self-service
        user = request.user
        if user.is_authenticated and authz.has_any_write_permission(user):
            return None
        raise PermissionDenied("Your role does not allow changes.")
