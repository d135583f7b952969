import contextlib

import pytest
from django.db import connection

from inventory.core.choices import ConnectorType, DeviceRole
from inventory.db import bulk
from inventory.models import Cable, Device, Link, Port, PortAlias
from tests import factories as f

pytestmark = pytest.mark.django_db

CSV = """label,kind,a_device,a_port,b_device,b_port,polarity,length_m,install_date,vendor
P-1,SMF_OS2,gpu-1,eth0,leaf-1,Ethernet1/1,B,12.5,2026-10-14,
P-2,SMF_OS2,gpu-1,eth1,leaf-1,Ethernet1/2,B,13,2026-10-14,
"""


@pytest.fixture
def plant():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    return gpu, leaf


def test_dry_run_shows_what_would_be_created_and_writes_nothing(engineer_api, plant):
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", CSV, content_type="text/csv")
    assert r.status_code == 200, r.json()
    assert r.json()["summary"] == {"create": 2, "change": 0, "unchanged": 0, "error": 0}
    assert not Cable.objects.exists()


def test_apply_creates_cables_links_and_history_then_rerun_is_unchanged(engineer_api, plant):
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", CSV, content_type="text/csv")
    assert r.status_code == 201, r.json()
    assert Cable.objects.count() == 2
    assert Link.objects.filter(active=True).count() == 2
    cable = Cable.objects.get(label="P-1")
    assert cable.history.count() == 1
    assert cable.history.first().history_user.username == "engineer-user"
    again = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", CSV, content_type="text/csv")
    assert again.json()["summary"]["unchanged"] == 2


def test_a_link_already_recorded_between_two_ports_is_kept_not_recorded_twice(engineer_api, plant):
    """The batch's port pairs are looked up among the active links: a pair that has one keeps it."""
    gpu, leaf = plant
    a, b = sorted([gpu[0], leaf[0]], key=lambda p: p.pk)
    Link.objects.create(a_port=a, b_port=b)
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", CSV, content_type="text/csv")
    assert r.status_code == 201, r.json()
    assert Link.objects.filter(active=True, a_port=a, b_port=b).count() == 1
    assert Link.objects.filter(active=True).count() == 2  # P-2's link is new


def test_any_error_applies_nothing_and_every_error_is_reported_by_row(engineer_api, plant):
    bad = (
        CSV
        + "P-3,SMF_OS2,gpu-1,eth9,leaf-1,Ethernet2/1,B,x,2026-13-01,\nP-1,SMF_OS2,gpu-1,eth2,leaf-1,Ethernet1/1,B,1,,\n"
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", bad, content_type="text/csv")
    assert r.status_code == 400
    errors = {row["row"]: row["errors"] for row in r.json()["rows"] if row["errors"]}
    # every error of the row: the unknown port too, not only what the row says alone (the
    # port was not looked up once the length was unreadable)
    assert set(errors[3]) == {"length_m", "install_date", "a_port"}
    assert errors[3]["a_port"] == "Unknown port gpu-1:eth9 (gpu-1 has no port or cage of that name)."
    assert "Label repeated" in errors[4]["label"]
    assert not Cable.objects.exists()


def test_a_row_with_an_unreadable_field_still_names_its_unknown_device_and_vendor(engineer_api, plant):
    row = "P-9,SMF_OS2,nodev,Ethernet40/1,leaf-1,Ethernet1/1,B,abc,,Nobody Optics\n"
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", CSV + row, content_type="text/csv")
    [errors] = [row["errors"] for row in r.json()["rows"] if row["errors"]]
    assert errors == {
        "length_m": "Not a number: 'abc'.",
        "a_port": "Unknown device nodev.",
        "vendor": "Unknown vendor 'Nobody Optics'.",
    }


@pytest.mark.parametrize("length", ["100000", "12345678901234567890", "1e30"])
def test_a_length_past_what_a_cable_holds_is_refused_by_row_and_nothing_is_written(
    engineer_api, plant, length
):
    """Before, a length past 99999.99 m was applied; stored, it took down the cable's page, the
    desk list, ``GET /api/cables/<label>/``, ``/api/links/`` and the alert rules' run."""
    row = f"P-3,SMF_OS2,gpu-1,eth2,leaf-1,Ethernet2/1,B,{length},,\n"
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", CSV + row, content_type="text/csv")
    assert r.status_code == 400, r.json()
    [errors] = [row["errors"] for row in r.json()["rows"] if row["errors"]]
    assert errors == {"length_m": f"At most 99999.99 m, not {length}."}
    assert not Cable.objects.exists()


@pytest.mark.parametrize(
    ("length", "unit", "error"),
    [
        ("abc", "m", "Not a number: 'abc'."),
        ("500000", "km", "At most 99999.99 m, not 500000000.00."),
        ("40", "yd", "Unknown length unit 'yd'; one of km, m, cm, mi, ft, in."),
        ("40", "M", "Unknown length unit 'M'; one of km, m, cm, mi, ft, in."),
        ("3", "furlong", "Unknown length unit 'furlong'; one of km, m, cm, mi, ft, in."),
    ],
)
def test_a_netbox_length_that_is_no_cable_length_is_the_rows_error(engineer_api, plant, length, unit, error):
    """NetBox's cable CSV: an unreadable length was a 500 (the whole file refused, no row named).
    A unit NetBox does not have (its choices are matched exactly, so ``M`` is none either) was
    read as metres: 40 yd became a 40 m cable. It is the row's error, naming the units."""
    netbox_csv = (
        "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,type,status,label,"
        "length,length_unit\r\n"
        f"gpu-1,dcim.interface,eth2,leaf-1,dcim.interface,Ethernet2/1,smf,connected,N-1,{length},{unit}\r\n"
    )
    r = engineer_api.generic(
        "POST", "/api/cables/import/?dry_run=0&dialect=netbox", netbox_csv, content_type="text/csv"
    )
    assert r.status_code == 400
    assert r.json()["rows"][0]["errors"] == {"length_m": error}
    assert not Cable.objects.exists()


def test_a_plan_refuses_an_install_date_still_ahead_for_a_cable_that_is_in(engineer_api, plant):
    """Planned rows may carry the day they are planned for; installed ones (or a recorded
    installed cable's date changed) may not, as marking a cable installed never could. Before,
    the row was applied and the cable's retest came due on 9999-12-31: never asked for."""
    ahead = "31 Dec 9999 is still ahead: mark a cable installed once it is in."
    plan = (
        "label,kind,a_device,a_port,b_device,b_port,install_date,status\n"
        "P-3,SMF_OS2,gpu-1,eth2,leaf-1,Ethernet2/1,9999-12-31,installed\n"
        "P-4,SMF_OS2,gpu-1,eth3,leaf-1,Ethernet2/2,9999-12-31,planned\n"
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", plan, content_type="text/csv")
    assert r.status_code == 400
    errors = {row["label"]: row["errors"] for row in r.json()["rows"] if row["errors"]}
    assert errors == {"P-3": {"install_date": ahead}}
    assert not Cable.objects.exists()
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", CSV, content_type="text/csv")
    assert r.status_code == 201
    moved = CSV.replace("B,12.5,2026-10-14", "B,12.5,9999-12-31")
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", moved, content_type="text/csv")
    assert r.status_code == 400
    assert r.json()["rows"][0]["errors"] == {"install_date": ahead}
    assert str(Cable.objects.get(label="P-1").install_date) == "2026-10-14"


def test_a_json_row_that_is_no_row_is_named_as_the_answer_numbers_rows(engineer_api, plant):
    """The rows of an answer count from 1; this refusal counted from 0 ("Row 0" for the first
    row), so a client fixed the wrong one, and it did not say which column held a list."""
    good = {"label": "P-1", "kind": "SMF_OS2", "a_device": "gpu-1", "a_port": "eth0"}
    good |= {"b_device": "leaf-1", "b_port": "Ethernet1/1"}
    for rows, detail in [
        (
            [good, {**good, "label": "P-2", "b_port": ["Ethernet1/2"]}],
            "Row 2, column 'b_port': a text, a number, yes/no or null, not a list or an object.",
        ),
        ([["P-1"]], "Row 1: every row is an object of column -> text or number."),
    ]:
        r = engineer_api.post("/api/cables/import/?dry_run=0", {"rows": rows}, format="json")
        assert r.status_code == 400
        assert r.json()["detail"] == detail
    assert not Cable.objects.exists()


def test_a_fibre_count_in_digits_int_cannot_read_is_the_rows_error(engineer_api, plant):
    """ "²" passes ``str.isdigit`` but not ``int``: the plan was a 500."""
    plan = (
        "label,kind,a_device,a_port,b_device,b_port,a_fibres\nP-3,SMF_OS2,gpu-1,eth2,leaf-1,Ethernet2/1,²\n"
    )
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", plan, content_type="text/csv")
    assert r.status_code == 400
    assert r.json()["rows"][0]["errors"] == {"a_fibres": "A fibre count from 1 to 32."}


def test_a_plan_refuses_an_install_date_before_the_plant(engineer_api, plant):
    plan = "label,kind,a_device,a_port,b_device,b_port,install_date\nP-3,SMF_OS2,gpu-1,eth2,leaf-1,Ethernet2/1,1899-12-31\n"
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", plan, content_type="text/csv")
    assert r.status_code == 400
    assert r.json()["rows"][0]["errors"] == {
        "install_date": "1899-12-31 is before the earliest install date accepted (2000-01-01)."
    }
    assert not Cable.objects.exists()


def test_unknown_port_and_taken_port_are_named(engineer_api, plant):
    gpu, leaf = plant
    f.jumper("OLD", gpu[2], leaf[2])
    rows = [
        {
            "label": "N-1",
            "kind": "SMF_OS2",
            "a_device": "gpu-1",
            "a_port": "eth7",
            "b_device": "leaf-1",
            "b_port": "Ethernet1/1",
        },
        {
            "label": "N-2",
            "kind": "SMF_OS2",
            "a_device": "gpu-1",
            "a_port": "eth3",
            "b_device": "leaf-1",
            "b_port": "Ethernet2/1",
        },
    ]
    r = engineer_api.post("/api/cables/import/?dry_run=1", {"rows": rows}, format="json")
    errs = [row["errors"] for row in r.json()["rows"]]
    assert "Unknown port gpu-1:eth7" in errs[0]["a_port"]
    assert errs[1]["b_port"] == "leaf-1:Ethernet2/1 is already cabled (OLD)."


def test_wrong_content_type_and_malformed_json(engineer_api, plant):
    assert (
        engineer_api.generic("POST", "/api/cables/import/", "x", content_type="application/xml").status_code
        == 415
    )
    assert (
        engineer_api.generic("POST", "/api/cables/import/", "{", content_type="application/json").status_code
        == 400
    )


def _planner_row_estimate(table: str) -> int | None:
    """The row count the query planner believes ``table`` has (None: no statistics)."""
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            cur.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
            n = cur.fetchone()[0]
            return None if n < 0 else int(n)
        cur.execute("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'")
        if cur.fetchone() is None:
            return None
        cur.execute("SELECT stat FROM sqlite_stat1 WHERE tbl = %s", [table])
        row = cur.fetchone()
        return int(row[0].split()[0]) if row else None


def test_a_large_applied_plan_refreshes_the_planner_statistics(
    engineer_api, django_capture_on_commit_callbacks
):
    """A new hall of 1,200 cables: once committed, the planner knows the cable table's size
    (before, it planned against the near-empty table and chose whole-table hash joins)."""
    n = 1200
    rack = f.RackFactory()
    a = Device.objects.create(name="mgmt-a", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=1)
    b = Device.objects.create(name="mgmt-b", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=2)
    rows = [[d.pk, f"Ethernet{i}", ConnectorType.RJ45] for d in (a, b) for i in range(1, n + 1)]
    ids = bulk.bulk_insert_rows(Port, ["device_id", "name", "connector_type"], rows)
    bulk.bulk_insert_rows(
        PortAlias,
        ["port_id", "device_id", "name", "source"],
        [[pk, r[0], r[1], "canonical"] for pk, r in zip(ids, rows, strict=True)],
    )
    csv = "label,kind,a_device,a_port,b_device,b_port\n" + "".join(
        f"M-{i},CAT6A,mgmt-a,Ethernet{i},mgmt-b,Ethernet{i}\n" for i in range(1, n + 1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 201, r.json()
    assert Cable.objects.count() == n
    assert _planner_row_estimate("inventory_cable") == n
    assert _planner_row_estimate("inventory_cableend") == 2 * n


def test_a_plan_small_beside_a_large_hall_leaves_the_statistics_to_autovacuum(
    engineer_api, django_capture_on_commit_callbacks
):
    """1,000 cables added to a hall the planner counts at 12,000: the statistics still describe
    the table well (under a tenth changed), so the import does not pay for an ANALYZE of the plan
    tables; a first hall of the same size does (the test above)."""
    n_old, n_new = 12_000, 1_000
    rows = [[f"OLD-{i}", "CAT6A", "installed"] for i in range(n_old)]
    bulk.bulk_insert_rows(Cable, ["label", "kind", "status"], rows)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    counted = _planner_row_estimate("inventory_cable")
    assert counted == n_old
    rack = f.RackFactory()
    a = Device.objects.create(name="mgmt-a", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=1)
    b = Device.objects.create(name="mgmt-b", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=2)
    prows = [[d.pk, f"Ethernet{i}", ConnectorType.RJ45] for d in (a, b) for i in range(1, n_new + 1)]
    ids = bulk.bulk_insert_rows(Port, ["device_id", "name", "connector_type"], prows)
    bulk.bulk_insert_rows(
        PortAlias,
        ["port_id", "device_id", "name", "source"],
        [[pk, r[0], r[1], "canonical"] for pk, r in zip(ids, prows, strict=True)],
    )
    csv = "label,kind,a_device,a_port,b_device,b_port\n" + "".join(
        f"M-{i},CAT6A,mgmt-a,Ethernet{i},mgmt-b,Ethernet{i}\n" for i in range(1, n_new + 1)
    )
    with django_capture_on_commit_callbacks(execute=True):
        r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 201, r.json()
    assert Cable.objects.count() == n_old + n_new
    assert _planner_row_estimate("inventory_cable") == n_old  # not re-counted: left to autovacuum


def _mgmt_ports(n: int) -> None:
    rack = f.RackFactory()
    a = Device.objects.create(name="mgmt-a", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=1)
    b = Device.objects.create(name="mgmt-b", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=2)
    rows = [[d.pk, f"Ethernet{i}", ConnectorType.RJ45] for d in (a, b) for i in range(1, n + 1)]
    ids = bulk.bulk_insert_rows(Port, ["device_id", "name", "connector_type"], rows)
    bulk.bulk_insert_rows(
        PortAlias,
        ["port_id", "device_id", "name", "source"],
        [[pk, r[0], r[1], "canonical"] for pk, r in zip(ids, rows, strict=True)],
    )


def _import_range(api, start: int, stop: int, capture=None) -> None:
    """Import cables ``start..stop-1`` between the mgmt switches; ``capture`` runs the on-commit
    work inside a test's transaction (None: the import commits for real)."""
    csv = "label,kind,a_device,a_port,b_device,b_port\n" + "".join(
        f"M-{i},CAT6A,mgmt-a,Ethernet{i},mgmt-b,Ethernet{i}\n" for i in range(start, stop)
    )
    with capture(execute=True) if capture else contextlib.nullcontext():
        r = api.generic("POST", "/api/cables/import/?dry_run=0", csv, content_type="text/csv")
    assert r.status_code == 201, r.json()


def _counted_hall(n_old: int) -> None:
    bulk.bulk_insert_rows(
        Cable, ["label", "kind", "status"], [[f"OLD-{i}", "CAT6A", "installed"] for i in range(n_old)]
    )
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    assert _planner_row_estimate("inventory_cable") == n_old


def test_a_plan_that_grows_a_hall_by_a_third_leaves_the_statistics_to_autovacuum(
    engineer_api, django_capture_on_commit_callbacks
):
    """1,300 cables into a hall counted at 4,000: PostgreSQL scales its count by the table's size
    and the columns' distributions hardly move, so the import does not pay for an ANALYZE of the
    plan tables (a third of a 5,000-cable batch at the 4,096-GPU demo's size)."""
    _counted_hall(4000)
    _mgmt_ports(1300)
    _import_range(engineer_api, 1, 1301, django_capture_on_commit_callbacks)
    assert Cable.objects.count() == 5300
    assert _planner_row_estimate("inventory_cable") == 4000  # left to autovacuum


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_hall_doubled_by_several_plans_is_counted_again(engineer_api):
    """Where autovacuum is off (here) or has not got round to it, the statistics are still never off by more than
    the table's size: the plan that makes the hall twice the size it was counted at (the pages
    PostgreSQL scales its count by) re-counts it. Committed for real: the count runs on commit."""
    with connection.cursor() as cur:  # a fresh table file (no space left over by other tests)
        cur.execute("TRUNCATE inventory_cable CASCADE")
        cur.execute("ALTER TABLE inventory_cable SET (autovacuum_enabled = false)")
    try:
        _counted_hall(2000)
        _mgmt_ports(2400)
        _import_range(engineer_api, 1, 1201)
        assert _planner_row_estimate("inventory_cable") == 2000  # grown by 60 %: left as it was
        _import_range(engineer_api, 1201, 2401)
        assert _planner_row_estimate("inventory_cable") == 4400  # doubled: counted again
    finally:
        with connection.cursor() as cur:
            cur.execute("ALTER TABLE inventory_cable RESET (autovacuum_enabled)")


def test_a_nul_character_in_a_name_is_an_error_of_its_row_not_a_refused_request(engineer_api, plant):
    """PostgreSQL refuses a NUL in text: looked up, the name failed the whole request (the schema
    fuzz found it once rows with another error had their names looked up too)."""
    row = {"label": "N-9", "kind": "SMF_OS2", "a_device": "gpu-1\x00", "a_port": "eth0"}
    row |= {"b_device": "leaf-1", "b_port": "Ethernet1/1", "length_m": "x"}
    r = engineer_api.post("/api/cables/import/?dry_run=1", {"rows": [row]}, format="json")
    assert r.status_code == 400 and r.json()["summary"]["error"] == 1, r.json()  # the row's, named
    [errors] = [row["errors"] for row in r.json()["rows"]]
    assert errors == {"a_device": "Contains a NUL character.", "length_m": "Not a number: 'x'."}


def test_a_row_with_one_port_at_both_ends_says_so_once(engineer_api, plant):
    """A row from leaf-1:Ethernet2/1 back to leaf-1:Ethernet2/1 (a port OLD holds, or a free
    one): one message, at the row, that both ends are the same port, not "already cabled"
    twice or "used by row 1 too"; the words the cable API and the desk form say (one function)."""
    from inventory.core.validators import same_port_problem

    gpu, leaf = plant
    f.jumper("OLD", gpu[2], leaf[2])
    rows = [
        {"label": label, "kind": "SMF_OS2", "a_device": d, "a_port": p, "b_device": d, "b_port": p}
        for label, d, p in (("N-1", "leaf-1", "Ethernet2/1"), ("N-2", "gpu-1", "eth1"))
    ]
    r = engineer_api.post("/api/cables/import/?dry_run=1", {"rows": rows}, format="json")
    errs = [row["errors"] for row in r.json()["rows"]]
    assert errs[0] == {"b_port": "Both ends are the same port (leaf-1:Ethernet2/1)."}
    assert errs[1] == {"b_port": same_port_problem("gpu-1:eth1")}
