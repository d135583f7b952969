"""``field__any`` (one array parameter on PostgreSQL) selects exactly what ``field__in`` does."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import Port, PortAlias
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_any_matches_in_on_ids_foreign_keys_and_text():
    _, gpu = f.twin_port_device("gpu-any", names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-any", u=20)
    ids = [p.pk for p in gpu[:3]] + [10**9]
    assert set(Port.objects.filter(pk__any=ids)) == set(Port.objects.filter(pk__in=ids))
    devices = [gpu[0].device_id, leaf[0].device_id]
    assert set(Port.objects.filter(device_id__any=devices)) == set(Port.objects.filter(device_id__in=devices))
    names = ["eth0", "Ethernet1/1", "nope"]
    assert set(PortAlias.objects.filter(name__any=names)) == set(PortAlias.objects.filter(name__in=names))
    assert not Port.objects.filter(pk__any=[]).exists()


def test_any_sends_one_parameter_for_a_long_list():
    with CaptureQueriesContext(connection) as ctx:
        list(Port.objects.filter(pk__any=list(range(1, 5001))))
    sql = ctx.captured_queries[0]["sql"]
    # PostgreSQL: one array literal, not 5,000 placeholders; elsewhere a plain IN list.
    assert ("ANY(" in sql) == (connection.vendor == "postgresql")
    assert (" IN (" in sql) == (connection.vendor != "postgresql")
