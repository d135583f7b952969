"""Who may do what through the API.

* Reads need the model's view permission (every role but collector has it) and a token that is
  not ingest-only. A view with no queryset (a report, a worklist, a forecast) needs the plant's
  read permission (``authz`` action ``view``), as every page does; a write to one needs its
  declared ``required_permission``.
* Writes need the model permission (``inventory.add_cable`` ...) that the user's role grants,
  and a token that is neither read-only nor ingest-only. A POST to an object's own action
  (``/api/cables/<label>/status/``) is a change of that object. Object-level rules
  (a technician edits cables only in their team's sites) come from ``inventory.access.authz``.
* Telemetry ingest needs ``inventory.add_telemetrysample``; an ingest token may do only that.
"""

from rest_framework import permissions

from inventory.access import authz
from inventory.core.choices import TokenKind
from inventory.models import ApiToken


def token_kind(request) -> str | None:
    auth = getattr(request, "auth", None)
    return auth.kind if isinstance(auth, ApiToken) else None


class PlantPermission(permissions.DjangoModelPermissions):
    """Model permissions, GET included, narrowed by the token's kind."""

    perms_map = {
        "GET": ["%(app_label)s.view_%(model_name)s"],
        "OPTIONS": [],
        "HEAD": ["%(app_label)s.view_%(model_name)s"],
        "POST": ["%(app_label)s.add_%(model_name)s"],
        "PUT": ["%(app_label)s.change_%(model_name)s"],
        "PATCH": ["%(app_label)s.change_%(model_name)s"],
        "DELETE": ["%(app_label)s.delete_%(model_name)s"],
    }
    message = "Your role does not allow this."

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        kind = token_kind(request)
        if kind == TokenKind.INGEST:
            self.message = "An ingest token may only post telemetry."
            return False
        if request.method not in permissions.SAFE_METHODS and kind == TokenKind.READ_ONLY:
            self.message = "This token is read-only."
            return False
        if getattr(view, "required_permission", None) and request.method not in permissions.SAFE_METHODS:
            return request.user.has_perm(view.required_permission)
        if not hasattr(view, "get_queryset") and not hasattr(view, "queryset"):
            if request.method in permissions.SAFE_METHODS:
                return authz.can(request.user, "view")
            return bool(getattr(view, "required_permission", None))  # checked above
        return super().has_permission(request, view)

    def get_required_permissions(self, method, model_cls):
        if method == "POST" and getattr(self, "_detail_action", False):
            method = "PATCH"  # an action on one object changes it
        return super().get_required_permissions(method, model_cls)

    def _queryset(self, view):
        self._detail_action = bool(getattr(view, "detail", False)) and getattr(view, "action", "") not in (
            "create",
            None,
        )
        return super()._queryset(view)

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        if not authz.object_change_allowed(request.user, obj):
            self.message = "You may change this only in the sites your team is assigned to."
            return False
        return True


class IngestPermission(permissions.BasePermission):
    """For ``POST /api/telemetry/``: any token kind but read-only, with the ingest permission."""

    message = "Posting telemetry needs the telemetry-ingest permission."

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        if token_kind(request) == TokenKind.READ_ONLY:
            self.message = "This token is read-only."
            return False
        return request.user.has_perm("inventory.add_telemetrysample")
