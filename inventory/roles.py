"""Roles are Django groups with permissions, kept in step after every migrate.

* viewer: read everything.
* technician: viewer + record tests, inspections and faults, swap modules, change cable status.
* engineer: everything on the plant (add/change every inventory model), imports, labels.
* admin: engineer + user and token administration (give people ``is_staff`` for the admin).
* collector: post telemetry, nothing else (for service accounts behind ingest tokens).
"""

from django.contrib.auth.models import Group, Permission

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
    "maintenancewindow",
]

TECHNICIAN_ACTIONS = [
    "add_cabletest",
    "add_fibreresult",
    "add_otdrtrace",
    "add_inspection",
    "change_cable",
    "change_transceiver",
    "add_transceiverplacement",
    "change_transceiverplacement",
    "add_maintenancewindow",
    "print_cable_label",  # the labels of one cable (the one they replace), inline
]

# Printing labels for racks, rows, selections and background batches is an engineer action.
ENGINEER_LABEL_ACTIONS = {"print_labels", "print_cable_label", "view_labelbatch"}


def role_permissions() -> dict[str, set[str]]:
    view = {f"view_{m}" for m in PLANT_MODELS} | {"view_telemetrysample", "view_forecastsnapshot"}
    plant = {f"{a}_{m}" for m in PLANT_MODELS for a in ("add", "change")}
    return {
        "viewer": view,
        "technician": view | set(TECHNICIAN_ACTIONS),
        "engineer": view | plant | {"add_telemetrysample", "add_forecastsnapshot"} | ENGINEER_LABEL_ACTIONS,
        "admin": view
        | plant
        | ENGINEER_LABEL_ACTIONS
        | {"add_telemetrysample", "add_forecastsnapshot", "add_apitoken", "change_apitoken", "view_apitoken"},
        "collector": {"add_telemetrysample"},
    }


def sync_roles(**kwargs) -> None:
    perms = {p.codename: p for p in Permission.objects.filter(content_type__app_label="inventory")}
    for role, codenames in role_permissions().items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.set([perms[c] for c in codenames if c in perms])
