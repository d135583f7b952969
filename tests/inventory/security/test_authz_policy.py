"""The permission policy (``inventory/access/authz.py``) asked directly: which role may take which
action on which site's object, the sentence a refused person reads, and the site of each object.

The plant is the security suite's (conftest): the technician's team looks after North.

site North: [leaf-n OSFP1]--N-1--[leaf-n2 OSFP1]      site South: [leaf-s]--S-1--[leaf-s2]
            [leaf-n OSFP2]--X-1--[host-s eth0] (a trunk from North to South, its B end on a port)
site West (no team): [leaf-w]--W-1--[leaf-w2]
"""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from inventory.access import authz
from inventory.core.choices import TokenKind
from inventory.models import (
    Cable,
    CableEnd,
    CableTest,
    Device,
    FieldNote,
    MaintenanceWindow,
    Rack,
    Site,
    Vendor,
)
from inventory.models.base import sanctioned_bulk_write
from tests import factories as f
from tests.inventory.security.conftest import _rack

pytestmark = pytest.mark.django_db

EVERY = set(authz.ACTIONS)
# Actions a technician takes in their own team's site, and those they take anywhere (no object).
TECH_IN_OWN_SITE = {
    "view",
    "record_test",
    "inspect",
    "report_fault",
    "journal",
    "swap_module",
    "service_cable",
    "edit_cable",
    "retire_cable",
    "edit_module",
    "acknowledge_alert",
    "record_repair",
    "silence",
    "drain",
    "print_cable_label",
    "sweep_retests",
}
TECH_ANYWHERE = {"view", "sweep_retests"}  # not site-scoped: the role alone decides
# What a technician's role does not give: a new cable or module (``replace_cable`` adds a cable),
# the engineers' overrides, imports, batch labels and settings.
TECH_NEVER = {
    "replace_cable",
    "install_cable",
    "add_module",
    "override_alert",
    "override_drain",
    "import",
    "print_labels",
    "manage_settings",
}


@pytest.fixture
def trunk(plant):
    """X-1: North (a cage end) to South (a port end on a device without cages)."""
    leaf_n = Device.objects.get(name="leaf-n")
    north_port = leaf_n.ports.get(name="Ethernet2/1")
    host = Device.objects.create(name="host-s", rack=Rack.objects.get(name="S01"), position_u=10)
    south_port = f.port(host, "eth0")
    return f.jumper("X-1", north_port, south_port)


@pytest.fixture
def west(plant):
    """W-1 in site West, which no team looks after."""
    site = Site.objects.create(name="West", slug="west")
    rack = _rack(site, "W01")
    _, a = f.twin_port_device("leaf-w", rack=rack, u=1)
    _, b = f.twin_port_device("leaf-w2", rack=rack, u=2)
    return f.jumper("W-1", a[0], b[0])


def fresh_user(plant, role):
    """The role's user read anew (no permissions or sites cached on it yet)."""
    return type(plant.users[role]).objects.get(username=role)


def allowed(user, obj=None) -> set[str]:
    return {name for name, ok in authz.actions_for(user, obj).items() if ok}


def test_a_technician_acts_in_their_own_site_only(plant):
    tech = plant.users["technician"]
    assert allowed(tech, plant.north_cable) == TECH_IN_OWN_SITE
    assert allowed(tech, plant.south_cable) == TECH_ANYWHERE
    assert allowed(tech) == EVERY - TECH_NEVER  # no object: the role alone decides
    assert TECH_IN_OWN_SITE | TECH_NEVER == EVERY


@pytest.mark.parametrize("role", ["engineer", "admin"])
def test_engineers_and_admins_act_everywhere(plant, role):
    user = plant.users[role]
    assert allowed(user, plant.north_cable) == EVERY
    assert allowed(user, plant.south_cable) == EVERY
    assert allowed(user) == EVERY


def test_a_viewer_only_sees_and_a_collector_does_nothing(plant):
    for obj in (plant.north_cable, plant.south_cable, None):
        assert allowed(plant.users["viewer"], obj) == {"view"}
        assert allowed(plant.users["collector"], obj) == set()


def test_a_superuser_may_do_every_action_but_an_unknown_one(plant):
    root = f.UserFactory(username="root", is_superuser=True)
    assert allowed(root, plant.south_cable) == EVERY
    assert authz.has_perm(root, "inventory.anything_at_all")
    assert not authz.can(root, "launch_rockets")
    assert not authz.can(root, "launch_rockets", plant.south_cable)


def test_nobody_logged_in_or_inactive_may_do_anything(plant):
    tech = fresh_user(plant, "technician")
    tech.is_active = False
    root = f.UserFactory(username="root", is_superuser=True, is_active=False)
    for user in (None, AnonymousUser(), tech, root):
        assert allowed(user, plant.north_cable) == set(), user
        assert allowed(user) == set(), user
    assert not authz.has_perm(None, "inventory.view_cable")
    assert not authz.has_perm(tech, "inventory.view_cable")
    assert not authz.has_perm(root, "inventory.view_cable")
    assert authz.has_perm(plant.users["technician"], "inventory.change_cable")
    assert not authz.has_perm(plant.users["technician"], "inventory.add_cable")


def test_a_trunk_between_two_sites_is_the_technicians_from_their_end(plant, trunk):
    tech = plant.users["technician"]
    assert authz.site_ids_of(trunk) == {plant.north.pk, plant.south.pk}
    assert allowed(tech, trunk) == TECH_IN_OWN_SITE


def test_an_object_in_no_site_is_for_engineers_only(plant):
    loose = Cable.objects.create(label="LOOSE-1", kind="SMF_OS2")  # no ends: in no rack of any site
    assert authz.site_ids_of(loose) == frozenset()
    assert allowed(plant.users["technician"], loose) == TECH_ANYWHERE
    assert allowed(plant.users["engineer"], loose) == EVERY
    assert authz.refusal(plant.users["technician"], "edit_cable", loose) == (
        "This is in no rack of any site, so only an engineer may edit the cable here: ask an engineer."
    )


# --- the sentence a refused person reads --------------------------------------------------------


def test_refusal_says_why_in_a_sentence_a_person_can_act_on(plant, west, trunk):
    tech, viewer = plant.users["technician"], plant.users["viewer"]
    assert authz.refusal(tech, "record_test", plant.north_cable) == ""
    assert authz.refusal(None, "record_test") == "Log in to record a test."
    assert authz.refusal(AnonymousUser(), "print_labels") == "Log in to print labels."
    assert authz.refusal(viewer, "record_test", plant.north_cable) == (
        "Your role (viewer) does not allow you to record a test: ask an admin."
    )
    assert authz.refusal(tech, "record_test", plant.south_cable) == (
        "You are not in a team for South, so you may not record a test here: "
        "ask an admin to add you to its team."
    )
    assert authz.refusal(tech, "launch_rockets") == (
        "Your role (technician) does not allow you to launch_rockets: ask an admin."
    )
    # two roles, named in order; a person with no role at all
    tech.groups.add(viewer.groups.get())
    assert (
        authz.refusal(tech, "import")
        == "Your role (technician, viewer) does not allow you to import: ask an admin."
    )
    nobody = f.UserFactory(username="nobody")
    assert (
        authz.refusal(nobody, "view")
        == "Your role (no role) does not allow you to see the plant: ask an admin."
    )


def test_refusal_names_every_site_of_the_object_in_order(plant, west):
    """A window silencing a South and a West rack: neither is the technician's."""
    now = timezone.now()
    window = MaintenanceWindow.objects.create(reason="swap", starts_at=now, ends_at=now + timedelta(hours=1))
    window.racks.add(Rack.objects.get(name="W01"), Rack.objects.get(name="S01"))
    tech = plant.users["technician"]
    assert authz.refusal(tech, "silence", window) == (
        "You are not in a team for South or West, so you may not silence (maintenance window) here: "
        "ask an admin to add you to its team."
    )


def test_check_raises_the_refusal_and_lets_the_allowed_through(plant):
    tech = plant.users["technician"]
    assert authz.check(tech, "edit_cable", plant.north_cable) is None
    with pytest.raises(PermissionDenied) as refused:
        authz.check(tech, "edit_cable", plant.south_cable)
    assert str(refused.value) == authz.refusal(tech, "edit_cable", plant.south_cable)
    assert "South" in str(refused.value)


# --- bulk writes: all or nothing, the sites of many cables read at once -------------------------


def test_check_each_refuses_the_whole_batch_when_one_object_is_outside(plant, trunk, west):
    tech = fresh_user(plant, "technician")
    authz.check_each(tech, "edit_cable", [plant.north_cable, trunk])
    with pytest.raises(PermissionDenied, match="South"):
        authz.check_each(tech, "edit_cable", [plant.north_cable, plant.south_cable])
    with pytest.raises(PermissionDenied, match="West"):
        authz.check_each(tech, "edit_cable", [Cable.objects.get(label="W-1")])
    # nothing to change: the role alone decides
    authz.check_each(tech, "edit_cable", [])
    with pytest.raises(PermissionDenied, match="viewer"):
        authz.check_each(plant.users["viewer"], "edit_cable", [])
    with pytest.raises(PermissionDenied, match="technician"):
        authz.check_each(tech, "install_cable", [plant.north_cable])


def test_check_each_reads_the_sites_of_every_cable_in_one_query(plant, trunk, west):
    tech = fresh_user(plant, "technician")
    authz.user_site_ids(tech)
    authz.has_perm(tech, "inventory.change_cable")
    cables = list(Cable.objects.filter(label__in=["N-1", "X-1"]).order_by("label"))
    with CaptureQueriesContext(connection) as ctx:
        authz.check_each(tech, "edit_cable", cables)
    assert len(ctx.captured_queries) == 1
    # the sites read in that one query are the sites each cable is in (cage and port ends alike)
    assert [c._ct_site_ids for c in cables] == [{plant.north.pk}, {plant.north.pk, plant.south.pk}]
    # an engineer needs no sites at all
    eng = fresh_user(plant, "engineer")
    authz.has_perm(eng, "inventory.change_cable")
    cables = list(Cable.objects.all())
    with CaptureQueriesContext(connection) as ctx:
        authz.check_each(eng, "edit_cable", cables)
    assert len(ctx.captured_queries) == 0
    assert not any(hasattr(c, "_ct_site_ids") for c in cables)


def test_check_each_reads_only_the_ends_that_are_plugged_in(plant, trunk):
    """X-1's South end unplugged: the batch read sees North only, as ``site_ids_of`` does."""
    with sanctioned_bulk_write():
        CableEnd.objects.filter(cable=trunk, side="B").update(active=False)
    tech = fresh_user(plant, "technician")
    cables = [Cable.objects.get(label="X-1")]
    authz.check_each(tech, "edit_cable", cables)
    assert cables[0]._ct_site_ids == {plant.north.pk}
    assert authz.site_ids_of(Cable.objects.get(label="X-1")) == {plant.north.pk}


def test_check_each_reads_no_sites_for_a_role_that_is_refused_anyway(plant):
    viewer = fresh_user(plant, "viewer")
    authz.has_perm(viewer, "inventory.view_cable")
    cables = list(Cable.objects.all())
    with pytest.raises(PermissionDenied):
        authz.check_each(viewer, "edit_cable", cables)
    assert not any(hasattr(c, "_ct_site_ids") for c in cables)
    # an action that is not site-scoped needs no sites either
    tech = fresh_user(plant, "technician")
    authz.check_each(tech, "sweep_retests", cables)
    assert not any(hasattr(c, "_ct_site_ids") for c in cables)


# --- the site of an object ----------------------------------------------------------------------


def test_site_ids_of_each_kind_of_object(plant, trunk):
    north, south = plant.north.pk, plant.south.pk
    assert authz.site_ids_of(None) == frozenset()
    assert authz.site_ids_of(plant.south) == {south}
    end = CableEnd.objects.get(cable=trunk, side="B")
    assert authz.site_ids_of(end) == {north, south}  # an end is its cable's
    assert authz.site_ids_of(Device.objects.get(name="host-s")) == {south}
    assert authz.site_ids_of(Rack.objects.get(name="N01")) == {north}
    assert authz.site_ids_of(Vendor.objects.create(name="Acme")) == frozenset()  # no site at all
    # a test is in its cable's sites (a parent), before it is even saved; one not yet on a cable
    # is in none
    assert authz.site_ids_of(CableTest(cable=trunk)) == {north, south}
    assert authz.site_ids_of(CableTest()) == frozenset()
    # a journal note on a North cable and a South rack is in both sites (every parent counts)
    note = FieldNote(cable=plant.north_cable, rack=Rack.objects.get(name="S01"))
    assert authz.site_ids_of(note) == {north, south}


def test_a_rack_read_with_its_row_and_room_needs_no_query(plant):
    rack = Rack.objects.select_related("row__room").get(name="S01")
    with CaptureQueriesContext(connection) as ctx:
        assert authz.site_ids_of(rack) == {plant.south.pk}
    assert len(ctx.captured_queries) == 0
    rack = Rack.objects.get(name="S01")  # nothing read with it: one query down to the site
    with CaptureQueriesContext(connection) as ctx:
        assert authz.site_ids_of(rack) == {plant.south.pk}
    assert len(ctx.captured_queries) == 1
    rack = Rack.objects.select_related("row").get(name="S01")  # the room not read: one query
    with CaptureQueriesContext(connection) as ctx:
        assert authz.site_ids_of(rack) == {plant.south.pk}
    assert len(ctx.captured_queries) == 1


def test_sites_and_permissions_are_read_once_per_request_until_fresh(plant):
    tech = fresh_user(plant, "technician")
    cable = Cable.objects.get(label="N-1")
    assert authz.can(tech, "edit_cable", cable)
    with CaptureQueriesContext(connection) as ctx:
        for action in authz.ACTIONS:
            authz.can(tech, action, cable)
        assert authz.user_site_ids(tech) == {plant.north.pk}
    assert len(ctx.captured_queries) == 0
    # the cable's ends are unplugged: its cached sites hold until ``fresh`` forgets them
    with sanctioned_bulk_write():
        CableEnd.objects.filter(cable=cable).update(active=False)
    assert authz.can(tech, "edit_cable", cable)
    assert authz.fresh(cable) is cable
    assert not authz.can(tech, "edit_cable", cable)
    assert authz.fresh(None) is None
    vendor = Vendor.objects.create(name="Acme")
    assert authz.fresh(vendor) is vendor
    # an anonymous visitor's sites need no query
    with CaptureQueriesContext(connection) as ctx:
        assert authz.user_site_ids(AnonymousUser()) == frozenset()
    assert len(ctx.captured_queries) == 0


# --- the API's and the admin's object rule ------------------------------------------------------


def test_object_change_allowed_is_the_site_scope_of_every_model_that_has_one(plant):
    tech, eng = plant.users["technician"], plant.users["engineer"]
    assert authz.object_change_allowed(tech, None)
    assert authz.object_change_allowed(tech, Vendor.objects.create(name="Acme"))  # no site to scope
    assert authz.object_change_allowed(tech, plant.north)
    assert not authz.object_change_allowed(tech, plant.south)
    assert not authz.object_change_allowed(tech, Device.objects.get(name="leaf-s"))
    assert authz.object_change_allowed(eng, plant.south)
    assert authz.is_site_scoped(plant.south_cable)
    assert not authz.is_site_scoped(Vendor(name="Acme"))


def test_check_object_change_lets_a_trunk_be_edited_from_its_end_but_nothing_moved_away(plant, trunk):
    tech, eng = plant.users["technician"], plant.users["engineer"]
    north, south = plant.north.pk, plant.south.pk
    authz.check_object_change(tech, plant.north_cable)
    authz.check_object_change(tech, Vendor.objects.create(name="Acme"))
    authz.check_object_change(tech, trunk, before=frozenset({south}))  # it was there already
    with pytest.raises(PermissionDenied, match=authz.SCOPE_MESSAGE):
        authz.check_object_change(tech, trunk)  # created (or moved) into South
    with pytest.raises(PermissionDenied, match=authz.SCOPE_MESSAGE):
        authz.check_object_change(tech, trunk, before=frozenset({north}))
    with pytest.raises(PermissionDenied, match=authz.SCOPE_MESSAGE):
        authz.check_object_change(tech, plant.south_cable, before=frozenset({south}))
    authz.check_object_change(eng, trunk)
    authz.check_object_change(eng, plant.south_cable)


# --- the page views' decorator ------------------------------------------------------------------


def test_requires_action_refuses_by_role_before_any_lookup_and_then_by_site(plant):
    looked_up = []

    def cable_from_label(request, label):
        looked_up.append(label)
        return Cable.objects.get(label=label)

    @authz.requires_action("edit_cable", obj=cable_from_label)
    def edit(request, label):
        """Edit a cable."""
        return f"edited {label}"

    @authz.requires_action("sweep_retests")
    def sweep(request):
        return "swept"

    assert edit.required_action == "edit_cable"
    assert edit.__name__ == "edit"
    assert edit.__doc__ == "Edit a cable."
    request = RequestFactory().post("/")
    request.user = plant.users["viewer"]
    with pytest.raises(PermissionDenied, match="viewer"):
        edit(request, label="NO-SUCH-CABLE")  # a 403, not a 404 from the lookup
    assert looked_up == []
    request.user = plant.users["technician"]
    assert edit(request, label="N-1") == "edited N-1"
    with pytest.raises(PermissionDenied, match="South"):
        edit(request, label="S-1")
    assert looked_up == ["N-1", "S-1"]
    assert sweep(request) == "swept"
    request.user = plant.users["viewer"]
    with pytest.raises(PermissionDenied):
        sweep(request)


def test_allow_any_user_write_marks_the_view(plant):
    def profile(request):
        return "ok"

    assert authz.allow_any_user_write(profile) is profile
    assert profile.required_action == "self"


# --- tokens --------------------------------------------------------------------------------------


def test_who_writes_and_which_token_kinds_each_role_may_mint(plant):
    users = plant.users
    root = f.UserFactory(username="root", is_superuser=True)
    nobody = f.UserFactory(username="nobody")
    writes = {name: authz.has_any_write_permission(u) for name, u in users.items()}
    assert writes == {"viewer": False, "technician": True, "engineer": True, "admin": True, "collector": True}
    assert authz.has_any_write_permission(root)
    assert not authz.has_any_write_permission(nobody)
    kinds = {name: authz.token_kinds_for(u) for name, u in users.items()}
    assert kinds == {
        "viewer": [TokenKind.READ_ONLY],
        "technician": [TokenKind.FULL, TokenKind.READ_ONLY],
        "engineer": [TokenKind.FULL, TokenKind.READ_ONLY, TokenKind.INGEST],
        "admin": [TokenKind.FULL, TokenKind.READ_ONLY, TokenKind.INGEST],
        "collector": [TokenKind.INGEST],  # telemetry ingest is no plant write: no full token
    }
    assert authz.token_kinds_for(root) == [TokenKind.FULL, TokenKind.READ_ONLY, TokenKind.INGEST]
    assert authz.token_kinds_for(nobody) == []
