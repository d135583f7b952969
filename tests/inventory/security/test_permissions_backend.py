"""The one-query permissions backend grants exactly what Django's ModelBackend grants."""

import pytest
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.access.backends import PermissionsBackend
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["viewer", "technician", "engineer"])
def test_same_permissions_as_model_backend_in_one_query(role):
    user = f.UserFactory(username=f"{role}-p", role=role)
    user.user_permissions.add(Permission.objects.get(codename="add_vendor"))  # a direct grant too
    expected = ModelBackend().get_all_permissions(type(user).objects.get(pk=user.pk))
    fresh = type(user).objects.get(pk=user.pk)
    with CaptureQueriesContext(connection) as ctx:
        got = PermissionsBackend().get_all_permissions(fresh)
    assert got == expected
    assert "inventory.add_vendor" in got
    assert len(ctx.captured_queries) == 1


def test_viewer_cannot_change_a_cable_and_inactive_users_get_nothing():
    viewer = f.UserFactory(username="v-p", role="viewer")
    assert viewer.has_perm("inventory.view_cable")
    assert not viewer.has_perm("inventory.change_cable")
    viewer.is_active = False
    viewer.save()
    assert PermissionsBackend().get_all_permissions(type(viewer).objects.get(pk=viewer.pk)) == set()


def test_each_user_reads_their_own_set_and_a_removed_role_is_gone_on_their_next_request():
    # The union is compiled once per process and only its user id bound: two users in turn, then
    # the first without their role, must each get what is theirs now.
    engineer = f.UserFactory(username="e-own", role="engineer")
    viewer = f.UserFactory(username="v-own", role="viewer")
    backend = PermissionsBackend()

    def now(user):
        return backend.get_all_permissions(type(user).objects.get(pk=user.pk))  # a new request's user

    assert "inventory.change_cable" in now(engineer)
    assert "inventory.change_cable" not in now(viewer)
    assert "inventory.view_cable" in now(viewer)
    engineer.groups.clear()
    assert now(engineer) == set()
    assert "inventory.view_cable" in now(viewer)
