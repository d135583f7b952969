"""Template context shared by every page."""

from django.utils.functional import SimpleLazyObject

from inventory.access import authz as _authz
from inventory.core.help import page_help


def authz(request):
    """``may.<action>``: what the user may do in general (object rules: ``{% can %}``)."""
    user = getattr(request, "user", None)
    return {"may": SimpleLazyObject(lambda: _authz.actions_for(user))}


def help_link(request):
    """``help_url``: the documentation of the page being shown (the "?" in the header)."""
    match = getattr(request, "resolver_match", None)
    return {"help_url": SimpleLazyObject(lambda: page_help(match.url_name if match else None))}
