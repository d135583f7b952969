"""Roles are Django groups with permissions, kept in step after every migrate.

* viewer: read everything.
* technician: viewer + record tests, inspections and faults, swap modules, change cable status.
* engineer: everything on the plant (add/change every inventory model), imports, labels.
* admin: engineer + user and token administration (give people ``is_staff`` for the admin):
  adds and changes users and their roles (never a superuser, never per-user permissions: see
  ``inventory/admin/accounts.py``), revokes tokens and mints them for service accounts.
* collector: post telemetry, nothing else (for service accounts behind ingest tokens).
"""

from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType

from inventory.access.authz import CUSTOM_PERMISSIONS
from inventory.models import Cable

# Every role, as ``ensure_user --role`` and the admin offer them.
ROLES = ("viewer", "technician", "engineer", "admin", "collector")

PLANT_MODELS = [
    "site",
    "room",
    "row",
    "rack",
    "team",
    "vendor",
    "device",
    "cage",
    "port",
    "portalias",
    "portmapping",
    "transceivermodel",
    "transceiver",
    "transceiverplacement",
    "rmacase",
    "cable",
    "cableend",
    "link",
    "cabletest",
    "fibreresult",
    "otdrtrace",
    "inspection",
    "alert",
    "repair",
    "maintenancewindow",
    "instrumentmapping",
]

TECHNICIAN_ACTIONS = [
    "report_fault",
    "add_rmacase",
    "add_cabletest",
    "add_fibreresult",
    "add_otdrtrace",
    "add_inspection",
    "change_cable",  # site-scoped: only in the sites of the technician's teams (authz.py)
    "change_cableend",
    "change_transceiver",
    "add_transceiverplacement",
    "change_transceiverplacement",
    "add_maintenancewindow",
    "add_linkdrain",  # drain and restore an alert's link (site-scoped), as they silence one
    "change_alert",
    "add_repair",  # a repair recorded on an alert (site-scoped like the rest)
    "print_cable_label",  # the labels of one cable (the one they replace), inline
]

# Printing labels for racks, rows, selections and background batches is an engineer action.
ENGINEER_LABEL_ACTIONS = {"print_labels", "print_cable_label", "view_labelbatch"}


ENGINEER_EXTRAS = ["report_fault", "edit_any_site", "import_plant", "print_labels", "manage_settings"]


# Models that are not plant data: nobody gets them through a role (tokens are managed by their
# owner through the profile page; the rest is machinery).
PRIVATE_MODELS = {"apitoken", "idempotencyrecord", "outboxmessage"}


def _inventory_models() -> list[str]:
    """Every inventory model (new ones join the roles automatically), PLANT_MODELS first."""
    names = [m._meta.model_name for m in apps.get_app_config("inventory").get_models()]
    return [n for n in dict.fromkeys([*PLANT_MODELS, *names]) if n not in PRIVATE_MODELS]


def role_permissions() -> dict[str, set[str]]:
    models = _inventory_models()
    view = {f"view_{m}" for m in models}
    plant = {f"{a}_{m}" for m in models for a in ("add", "change")} | set(ENGINEER_EXTRAS)
    return {
        "viewer": view,
        "technician": view | set(TECHNICIAN_ACTIONS),
        "engineer": view | plant | ENGINEER_LABEL_ACTIONS,
        "admin": view | plant | ENGINEER_LABEL_ACTIONS | {"view_apitoken", "change_apitoken", "add_apitoken"},
        "collector": {"add_telemetrysample"},
    }


def ensure_custom_permissions() -> None:
    """Permissions for actions that are not a model's add/change (see ``authz.CUSTOM_PERMISSIONS``)."""
    ct = ContentType.objects.get_for_model(Cable)
    for codename, name in CUSTOM_PERMISSIONS.items():
        Permission.objects.get_or_create(content_type=ct, codename=codename, defaults={"name": name})


# Permissions outside the inventory app, per role: the admin role manages user accounts.
AUTH_ROLE_PERMISSIONS = {"admin": {"view_user", "add_user", "change_user", "view_group"}}


def sync_roles(**kwargs) -> None:
    ensure_custom_permissions()
    perms = {p.codename: p for p in Permission.objects.filter(content_type__app_label="inventory")}
    auth_perms = {p.codename: p for p in Permission.objects.filter(content_type__app_label="auth")}
    for role, codenames in role_permissions().items():
        group, _ = Group.objects.get_or_create(name=role)
        extra = [auth_perms[c] for c in AUTH_ROLE_PERMISSIONS.get(role, ()) if c in auth_perms]
        group.permissions.set([perms[c] for c in codenames if c in perms] + extra)
