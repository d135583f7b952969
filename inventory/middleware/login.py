"""Login-required everywhere except what must be public."""

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired

from inventory.middleware.requestid import RequestIdMiddleware

__all__ = ["LoginRequiredMiddleware", "RequestIdMiddleware"]


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Django's login-required default, except for the API and ``/metrics``.

    Those authenticate per request (tokens) inside DRF and answer 401/403, never a redirect
    to an HTML login page.
    """

    exempt_prefixes = ("/api/", "/metrics")

    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path_info.startswith(self.exempt_prefixes):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
