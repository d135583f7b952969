"""Template context shared by every page."""

from django.utils.functional import SimpleLazyObject

from inventory.access import authz as _authz


def authz(request):
    """``may.<action>``: what the user may do in general (object rules: ``{% can %}``)."""
    user = getattr(request, "user", None)
    return {"may": SimpleLazyObject(lambda: _authz.actions_for(user))}
