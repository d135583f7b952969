"""Who may do what: one policy for the pages, the API and the admin.

An *action* is what a person does (``record_test``, ``edit_cable``, ...). Each maps to a Django
permission that a role (group, see ``roles.py``) grants, and every action on one object is
*site-scoped* (issue 32): a technician acts only in the sites their team is assigned to
(``Team.members`` + ``Site.team``), while an engineer (``inventory.edit_any_site``) acts
anywhere. ``site_ids_of`` knows the site of every model that has one (``SITE_PATHS``,
``SITE_PARENTS``); an object that could have a site but has none is for ``edit_any_site`` only.

Use it from:
* pages: ``{% load authz %}{% can "record_test" cable as may_test %}`` or the context from
  ``actions_for(user, cable)``; every page write is a view decorated with
  ``@requires_action("edit_cable", obj=cable_from_label)`` (a bulk write also calls
  ``check_each`` on what it changes), so a refused write is a 403 that changes nothing.
* the API: ``PlantPermission`` applies the same model permissions and ``object_change_allowed``
  (the site scope of ``in_user_sites``) before a change, ``check_object_change`` after a create or
  a change (the base viewset); views whose body names the object call ``check`` with it.
* the admin: ``admin.scope.SiteScopedAdmin`` applies ``object_change_allowed`` and
  ``check_object_change``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied

from inventory.core.choices import TokenKind
from inventory.models import Cable, CableEnd, Rack, Site

# Custom permissions (no model of their own): created by ``roles.sync_roles`` on the Cable
# content type, so they need no migration.
CUSTOM_PERMISSIONS = {
    "report_fault": "Can report a fault on a cable or module",
    "edit_any_site": "Can edit cables in every site (not only the team's)",
    "import_plant": "Can import cable plans and plant data",
    "print_labels": "Can print label batches",
    "manage_settings": "Can change rules, presets and settings",
}


@dataclass(frozen=True)
class Rule:
    perm: str
    site_scoped: bool = False
    label: str = ""
    also: tuple[str, ...] = ()  # further permissions the action needs (a replacement adds a cable)


ACTIONS: dict[str, Rule] = {
    "view": Rule("inventory.view_cable", label="See the plant"),
    # Every action on an object is decided with the object's site: a technician acts only in the
    # sites their team is assigned to; ``edit_any_site`` (engineers, admins) acts anywhere.
    "record_test": Rule("inventory.add_cabletest", site_scoped=True, label="Record a test"),
    "inspect": Rule("inventory.add_inspection", site_scoped=True, label="Record an inspection"),
    "report_fault": Rule("inventory.report_fault", site_scoped=True, label="Report a fault"),
    "journal": Rule("inventory.report_fault", site_scoped=True, label="Write in the journal"),
    "swap_module": Rule("inventory.change_transceiver", site_scoped=True, label="Swap a module"),
    "service_cable": Rule("inventory.change_cable", site_scoped=True, label="Record re-seating or cleaning"),
    "edit_cable": Rule("inventory.change_cable", site_scoped=True, label="Edit the cable"),
    "retire_cable": Rule("inventory.change_cable", site_scoped=True, label="Retire the cable"),
    # New label on the same ports, the old cable retired: a change of the old cable (site-scoped)
    # and a new cable record, so it needs ``add_cable`` as ``POST /api/cables/`` does.
    "replace_cable": Rule(
        "inventory.change_cable", site_scoped=True, label="Replace the cable", also=("inventory.add_cable",)
    ),
    "install_cable": Rule("inventory.add_cable", site_scoped=True, label="Record a new cable"),
    "add_module": Rule("inventory.add_transceiver", site_scoped=True, label="Record a new module"),
    "edit_module": Rule("inventory.change_transceiver", site_scoped=True, label="Edit the module"),
    # Put a cable in production while a warning-or-worse alert is open on its link, with a
    # reason for the journal: engineers (who edit every site), not technicians.
    "override_alert": Rule("inventory.edit_any_site", label="Put a cable in production over an open alert"),
    "acknowledge_alert": Rule("inventory.change_alert", site_scoped=True, label="Acknowledge an alert"),
    # What was done about an alert (issue 35): whoever may swap modules or service cables there.
    "record_repair": Rule("inventory.add_repair", site_scoped=True, label="Record a repair"),
    "silence": Rule(
        "inventory.add_maintenancewindow", site_scoped=True, label="Silence (maintenance window)"
    ),
    # Take an alert's link out of service (and put it back): recorded, with a maintenance window.
    "drain": Rule("inventory.add_linkdrain", site_scoped=True, label="Drain or restore a link"),
    # Drain a link the safety check refuses, with a reason for the journal: engineers only.
    "override_drain": Rule(
        "inventory.edit_any_site", label="Drain a link although the safety check refuses it"
    ),
    "print_cable_label": Rule(
        "inventory.print_cable_label", site_scoped=True, label="Print this cable's labels"
    ),
    # Whole-plant actions (no one object): the role alone decides.
    "sweep_retests": Rule("inventory.change_cable", label="Run the retest sweep now"),
    # Imports are an engineer's (the role decides who may import at all); each imported row is
    # then decided with the sites it touches (``site_refusals``), as every other write is.
    "import": Rule("inventory.import_plant", site_scoped=True, label="Import"),
    "print_labels": Rule("inventory.print_labels", label="Print labels"),
    "manage_settings": Rule("inventory.manage_settings", label="Settings"),
}

# Where each model's site comes from, for ``site_ids_of``: paths (``values_list``) from the model
# to a site id, and related objects whose sites it shares. A model in neither table (a vendor, a
# transceiver model, a team, a site's own settings) has no site: the role alone decides.
_LOC = "rack__row__room__site_id"
SITE_PATHS: dict[str, tuple[str, ...]] = {
    "room": ("site_id",),
    "row": ("room__site_id",),
    "rack": ("row__room__site_id",),
    "device": (_LOC,),
    "cage": (f"device__{_LOC}",),
    "port": (f"device__{_LOC}",),
    "portalias": (f"port__device__{_LOC}", f"device__{_LOC}"),
    "portmapping": (f"front_port__device__{_LOC}", f"rear_port__device__{_LOC}"),
    "link": (f"a_port__device__{_LOC}", f"b_port__device__{_LOC}"),
    "transceiver": (f"cage__device__{_LOC}", "stock_site_id"),
    "transceiverplacement": (f"cage__device__{_LOC}",),
    "alert": (f"link__a_port__device__{_LOC}", f"link__b_port__device__{_LOC}", f"port__device__{_LOC}"),
    "maintenancewindow": (
        f"links__a_port__device__{_LOC}",
        f"links__b_port__device__{_LOC}",
        f"devices__{_LOC}",
        "racks__row__room__site_id",
    ),
    "portbaseline": (f"port__device__{_LOC}",),
    "retestpolicy": ("site_id",),
}
SITE_PARENTS: dict[str, tuple[str, ...]] = {
    "alert": ("cable",),
    "alertnotification": ("alert",),
    "repair": ("alert",),
    "linkdrain": ("link",),
    "linksegment": ("link", "cable"),
    "cabletest": ("cable", "link"),
    "fibreresult": ("test",),
    "otdrtrace": ("test",),
    "inspection": ("cable_end", "port", "test"),
    "cabletestlatest": ("cable",),
    "fieldnote": ("cable", "transceiver", "device", "rack"),
    "rmacase": ("transceiver", "cable"),
    "retesttrigger": ("cable",),
    "retestreminder": ("cable",),
}
# Models whose writes are site-scoped for users without ``edit_any_site`` (the API, the admin).
SITE_SCOPED_MODELS = {"site", "cable", "cableend", *SITE_PATHS, *SITE_PARENTS}


def user_site_ids(user) -> frozenset[int]:
    """Sites assigned to the user through their teams (cached on the user object)."""
    cached = getattr(user, "_ct_site_ids", None)
    if cached is not None:
        return cached
    ids = (
        frozenset(Site.objects.filter(team__members=user).values_list("pk", flat=True))
        if user.is_authenticated
        else frozenset()
    )
    user._ct_site_ids = ids
    return ids


def _cable_site_ids(cable_id) -> frozenset[int]:
    # From the cable's own ends up to their sites (the end's cable index, then keys): a query
    # that started from the sites and OR-ed the port and cage paths down to the ends joined every
    # device's ports and cages first, 1.1 s a call on the 4,096-GPU demo, and it ran for every
    # technician's cable page and test upload.
    return frozenset(
        site
        for pair in CableEnd.objects.filter(active=True, cable_id=cable_id)
        .order_by()
        .values_list("port__device__rack__row__room__site_id", "cage__device__rack__row__room__site_id")
        for site in pair
        if site is not None
    )


def site_ids_of(obj) -> frozenset[int]:
    """The sites an object is in (a cable: every site one of its active ends is in; a test, an
    alert, a journal entry: its cable's, link's, port's ...; a maintenance window: every site it
    silences). Read from the saved object; cached on it for the request."""
    if obj is None:
        return frozenset()
    cached = getattr(obj, "_ct_site_ids", None)
    if cached is not None:
        return cached
    name = obj._meta.model_name if obj._meta.app_label == "inventory" else ""
    if isinstance(obj, Site):
        ids = frozenset([obj.pk])
    elif isinstance(obj, Cable | CableEnd):
        ids = _cable_site_ids(obj.pk if isinstance(obj, Cable) else obj.cable_id)
    elif isinstance(obj, Rack) and Rack.row.is_cached(obj) and type(obj.row).room.is_cached(obj.row):
        ids = frozenset([obj.row.room.site_id])  # the rack page read its row and room already
    else:
        found: set[int] = set()
        if obj.pk is not None:
            rows = type(obj)._base_manager.filter(pk=obj.pk).order_by()
            for path in SITE_PATHS.get(name, ()):
                found.update(s for s in rows.values_list(path, flat=True) if s is not None)
        for attr in SITE_PARENTS.get(name, ()):
            parent = getattr(obj, attr, None)
            if parent is not None:
                found |= site_ids_of(parent)
        ids = frozenset(found)
    obj._ct_site_ids = ids
    return ids


def _prime_cable_site_ids(cables: list) -> None:
    """``site_ids_of`` for many cables in one query (cached on each, as ``site_ids_of`` does)."""
    ids: dict[int, set[int]] = {c.pk: set() for c in cables}
    rows = CableEnd.objects.filter(active=True, cable_id__in=list(ids)).values_list(
        "cable_id", "port__device__rack__row__room__site_id", "cage__device__rack__row__room__site_id"
    )
    for cable_id, via_port, via_cage in rows:
        ids[cable_id].update(s for s in (via_port, via_cage) if s is not None)
    for c in cables:
        c._ct_site_ids = frozenset(ids[c.pk])


def in_user_sites(user, obj) -> bool:
    if has_perm(user, "inventory.edit_any_site"):
        return True
    return bool(site_ids_of(obj) & user_site_ids(user))


def _perms(user) -> frozenset[str] | None:
    """The user's permissions, read once per user object (None: a superuser, who has them all).

    ``user.has_perm`` walks every authentication backend (each instantiated anew) per call; the
    cable page asks eleven actions, each one or two permissions, on every request.
    """
    if user.is_superuser:
        return None
    cached = getattr(user, "_ct_perms", None)
    if cached is None:
        cached = user._ct_perms = frozenset(user.get_all_permissions())
    return cached


def has_perm(user, perm: str) -> bool:
    """``user.has_perm(perm)`` from the once-per-request set of ``_perms`` (an inactive user has none)."""
    if user is None or not user.is_active:
        return False
    perms = _perms(user)
    return perms is None or perm in perms


def can(user, action: str, obj=None) -> bool:
    """May ``user`` do ``action`` (on ``obj``)? Unknown actions are refused."""
    rule = ACTIONS.get(action)
    if rule is None or user is None or not user.is_authenticated or not user.is_active:
        return False
    perms = _perms(user)
    if perms is not None and (rule.perm not in perms or not all(p in perms for p in rule.also)):
        return False
    if rule.site_scoped and obj is not None:
        return in_user_sites(user, obj)
    return True


def refusal(user, action: str, obj=None) -> str:
    """Why ``user`` may not do ``action`` (on ``obj``), in one sentence a person can act on; ""
    when they may. The pages show it in place of a refused action, and the 403 page says it.

    A role that lacks the permission: "Your role (technician) does not allow you to print labels:
    ask an admin." A role that has it, on an object in a site none of the user's teams looks
    after: "You are not in a team for Demo Hall 1: ask an admin to add you to its team."
    """
    if can(user, action, obj):
        return ""
    rule = ACTIONS.get(action)
    what = rule.label.lower() if rule and rule.label else action
    if user is None or not user.is_authenticated:
        return f"Log in to {what}."
    if rule is not None and can(user, action):  # the role allows it; the site scope refuses
        names = sorted(Site.objects.filter(pk__in=site_ids_of(obj)).values_list("name", flat=True))
        if not names:
            return f"This is in no rack of any site, so only an engineer may {what} here: ask an engineer."
        where = " or ".join(names)
        return f"You are not in a team for {where}, so you may not {what} here: ask an admin to add you to its team."
    roles = ", ".join(sorted(user.groups.values_list("name", flat=True))) or "no role"
    return f"Your role ({roles}) does not allow you to {what}: ask an admin."


def check(user, action: str, obj=None) -> None:
    """Raise ``PermissionDenied`` (403, with ``refusal``'s sentence) unless ``can(user, action, obj)``."""
    if not can(user, action, obj):
        raise PermissionDenied(refusal(user, action, obj))


def check_each(user, action: str, objs) -> None:
    """``check`` on every object a bulk write changes: all or nothing (403 if one is refused).
    The sites of many cables are read in one query."""
    objs = list(objs)
    if not objs:
        return check(user, action)
    rule = ACTIONS.get(action)
    if (
        rule is not None
        and rule.site_scoped
        and can(user, action)
        and not has_perm(user, "inventory.edit_any_site")
    ):
        _prime_cable_site_ids([o for o in objs if isinstance(o, Cable)])
    for obj in objs:
        check(user, action, obj)


def allowed_cable_ids(user, action: str, cable_ids) -> frozenset[int]:
    """The cables of ``cable_ids`` on which ``user`` may take ``action`` (a list's rows: ``can``
    on each, their sites read in one query)."""
    cables = [Cable(pk=pk) for pk in set(cable_ids)]
    if not cables or not can(user, action):
        return frozenset()
    rule = ACTIONS.get(action)
    if rule is not None and rule.site_scoped and not has_perm(user, "inventory.edit_any_site"):
        _prime_cable_site_ids(cables)
    return frozenset(c.pk for c in cables if can(user, action, c))


def site_refusals(user, action: str, site_ids) -> dict[int | None, str]:
    """For each site of ``site_ids`` in which ``user`` may not take ``action``, ``refusal``'s
    sentence naming it (``None``: an object in no site, for ``edit_any_site`` only). An import
    asks once for all the sites its rows touch, then marks each row that touches a refused one:
    the row is an error naming the site, so nothing of the import is written."""
    site_ids = set(site_ids)
    if not site_ids or (can(user, action) and has_perm(user, "inventory.edit_any_site")):
        return {}
    if not can(user, action):  # the role refuses: every site, in the role's words
        return dict.fromkeys(site_ids, refusal(user, action))
    outside = site_ids - user_site_ids(user)
    out: dict[int | None, str] = {s.pk: refusal(user, action, s) for s in Site.objects.filter(pk__in=outside)}
    if None in outside:
        out[None] = refusal(user, action, Site())  # a site no team looks after: none
    return out


def may_print_labels(user) -> bool:
    """Whether the label print form prints for ``user`` (the print page's button, the cable
    list's "Print labels" and the print view's 403 all ask here): engineers print any batch,
    technicians the labels of the cables they handle; viewers only look."""
    return can(user, "print_labels") or can(user, "print_cable_label")


def actions_for(user, obj=None) -> dict[str, bool]:
    """Every action and whether the user may take it (for templates: ``may.record_test``)."""
    return {name: can(user, name, obj) for name in ACTIONS}


def fresh(obj):
    """``obj`` with its cached sites forgotten (after a write that may have moved it)."""
    if obj is not None and hasattr(obj, "_ct_site_ids"):
        del obj._ct_site_ids
    return obj


def is_site_scoped(obj) -> bool:
    """Whether writes on ``obj`` are decided with its site (every model that has one)."""
    return obj._meta.app_label == "inventory" and obj._meta.model_name in SITE_SCOPED_MODELS


def object_change_allowed(user, obj) -> bool:
    """The object-level rule shared by the API and the admin for any write on ``obj``: an object
    that has a site is changed only by a user of that site's team (or ``edit_any_site``); one
    that could have a site but has none (a spare with no stock site, a device in no rack) only
    with ``edit_any_site``."""
    if obj is None:
        return True
    if is_site_scoped(obj):
        return in_user_sites(user, obj)
    return True


def check_object_change(user, obj, before: frozenset[int] = frozenset()) -> None:
    """After a write, in its transaction (the API's and the admin's creates and changes): 403
    unless ``object_change_allowed`` and the object is in no site that is neither the user's nor
    one it was in ``before`` (a create has none). A technician edits a trunk between two
    buildings from their end, but moves nothing, and creates nothing, in another site."""
    if not object_change_allowed(user, fresh(obj)):
        raise PermissionDenied(SCOPE_MESSAGE)
    outside = site_ids_of(obj) - before - user_site_ids(user) if is_site_scoped(obj) else frozenset()
    if outside and not has_perm(user, "inventory.edit_any_site"):
        raise PermissionDenied(SCOPE_MESSAGE)


SCOPE_MESSAGE = "You may change this only in the sites your team is assigned to."


def requires_action(action: str, obj: Callable | None = None):
    """View decorator: 403 unless the user may take ``action`` (on ``obj(request, **kwargs)``).

    The decorated view is also marked, so the write guard middleware knows it is declared.
    """

    def decorator(view):
        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            check(request.user, action)  # the role first: no lookup for those who may not at all
            if obj is not None:
                check(request.user, action, obj(request, *args, **kwargs))
            return view(request, *args, **kwargs)

        wrapped.required_action = action
        return wrapped

    return decorator


def allow_any_user_write(view):
    """Mark a view whose POST any logged-in user may make (their own profile, tokens)."""
    view.required_action = "self"
    return view


def has_any_write_permission(user) -> bool:
    """A viewer has only view permissions; anyone else has at least one plant write."""
    if user.is_superuser:
        return True
    return any(not p.split(".", 1)[1].startswith("view_") for p in user.get_all_permissions() if "." in p)


INGEST_PERMISSION = "inventory.add_telemetrysample"


def token_kinds_for(user) -> list[str]:
    """The API token kinds ``user``'s role allows: a full token only for a role that writes to the
    plant (telemetry ingest alone is not a plant write), a read-only one for a role that reads it,
    an ingest one for a role that may post telemetry. A token never does more than its owner."""
    kinds = []
    writes = user.is_superuser or any(
        not p.split(".", 1)[1].startswith("view_") and p != INGEST_PERMISSION
        for p in user.get_all_permissions()
        if "." in p
    )
    if writes:
        kinds.append(TokenKind.FULL)
    if can(user, "view"):
        kinds.append(TokenKind.READ_ONLY)
    if user.has_perm(INGEST_PERMISSION):
        kinds.append(TokenKind.INGEST)
    return kinds
