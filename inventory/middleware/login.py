"""Login-required everywhere except what must be public; the read permission on every page."""

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.core.exceptions import PermissionDenied

from inventory.access import authz
from inventory.middleware.requestid import RequestIdMiddleware

__all__ = ["LoginRequiredMiddleware", "RequestIdMiddleware"]


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's login-required default, except for the API and ``/metrics``; then the read
    permission (``authz`` action ``view``) on every page.

    The API and ``/metrics`` authenticate per request (tokens) inside DRF and answer 401/403, never
    a redirect to an HTML login page; the API's permission classes ask the same read permission.
    A logged-in user without it (an ingest-only collector account, a user with no role) gets 403
    on every page, exports and file downloads included; only their own profile (and logout) stay
    open to them. The admin checks its own per-model view permissions.
    """

    exempt_prefixes = ("/api/", "/metrics")
    # Pages any logged-in user may open whatever their role: their own profile, and leaving.
    self_service_prefixes = ("/profile/", "/logout/", "/admin/")

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith(self.exempt_prefixes):
            return None
        redirect = super().process_view(request, view_func, view_args, view_kwargs)
        if redirect is not None or not getattr(view_func, "login_required", True):
            return redirect  # a login redirect, or a public view (login, healthz)
        if request.path_info.startswith(self.self_service_prefixes):
            return None
        if not authz.can(request.user, "view"):
            raise PermissionDenied("Your role does not allow you to see the plant.")
        return None
