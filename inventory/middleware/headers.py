"""Response headers every answer carries: ``Permissions-Policy`` (browser features no page uses
are off), and ``Cache-Control: private`` on whatever a logged-in user (session or token) is
answered, pages and exports alike, so no shared cache keeps plant data for the next person.
Content-Security-Policy comes from django-csp (settings ``CONTENT_SECURITY_POLICY``)."""

from django.utils.cache import patch_cache_control

from inventory.conf import app_settings


class SecurityHeadersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if app_settings.permissions_policy and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = app_settings.permissions_policy
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, private=True)
        return response
