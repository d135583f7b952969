"""Every message a cable-plan row can earn, pinned word for word (``cable_plan_import``).

The import validates a batch as a set (one query per kind of lookup, one check per distinct
value): whatever shape the checks take, each bad row must say what it said before, under the
same keys in the same order, and a good row must read the same values.

Plant::

    [gpu-1 OSFP1: eth0 eth1, OSFP2: eth2 eth3] (modules: twin DR4, MPO-12 APC)
    [leaf-1 OSFP1: Ethernet1/1 1/2, OSFP2: Ethernet2/1 2/2] (modules)
    [sw-empty OSFP1, OSFP2] (empty cages)      [pp-1 Front 1..12] (MPO APC panel)
    [mgmt-1 Gi1 Gi2 Gi3(retired) Gi4] (RJ45)
    gpu-1 eth2 --OLD-- leaf-1 Ethernet2/1;  RET: a retired cable
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from django.utils import timezone

from inventory.core.choices import ConnectorType, DeviceRole
from inventory.db import bulk
from inventory.models import Cable, CableEnd, Device, Link, LinkSegment, Transceiver
from inventory.services.plans.cable_plan import cable_plan_import
from tests import factories as f

pytestmark = pytest.mark.django_db


@pytest.fixture
def plant():
    _, gpu = f.twin_port_device("gpu-1", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-1", u=20)
    f.twin_port_device("sw-empty", u=30, with_modules=False, names=lambda c, k: f"swp{2 * c + k + 1}")
    f.patch_panel("pp-1")
    mgmt = Device.objects.create(
        name="mgmt-1", role=DeviceRole.MGMT_SWITCH, rack=f.RackFactory(), position_u=5
    )
    for i in range(1, 5):
        f.port(mgmt, f"Gi{i}", connector_type=ConnectorType.RJ45)
    gi3 = mgmt.ports.get(name="Gi3")
    gi3.retired_at = timezone.now()
    gi3.save()
    f.jumper("OLD", gpu[2], leaf[2])
    bulk.bulk_insert_rows(
        Cable, ["label", "kind", "status", "retired_at"], [["RET", "CAT6A", "retired", timezone.now()]]
    )
    f.VendorFactory(name="NVIDIA")
    return gpu, leaf


def _results(rows):
    res = cable_plan_import(rows=rows, dry_run=True)
    return [(r.row, r.label, r.action, list(r.errors.items()), r.changes) for r in res.rows]


def _row(label, a, b, kind="CAT6A", **kw):
    return {
        "label": label,
        "kind": kind,
        "a_device": a[0],
        "a_port": a[1],
        "b_device": b[0],
        "b_port": b[1],
        **kw,
    }


def test_every_row_error_is_reported_word_for_word(plant):
    leaf_module = Transceiver.objects.get(cage__device__name="leaf-1", cage__name="OSFP1").serial
    rows = [
        _row("M-1", ("mgmt-1", "Gi1"), ("mgmt-1", "Gi2"), vendor="nvidia", length_m=3, a_pinned=True),
        {
            "label": "bad label",
            "kind": "copper",
            "role": "weird",
            "polarity": "z",
            "length_m": "x",
            "install_date": "2026-13-01",
            "status": "tested",
            "part_number": "p" * 101,
            "serial_a": "s" * 101,
            "serial_b": "s" * 101,
            "lot": "l" * 41,
            "notes": "n" * 2001,
            "a_connector": "SC",
            "a_fibres": "40",
            "a_pinned": "maybe",
            "a_polish": "PC",
            "b_fibres": "abc",
            "b_port": ";",
        },
        {},
        "junk",
        {"label": "T-1", "_error": "runs through patch panels"},
        _row("M-6", ("mgmt-1", "Gi4"), ("mgmt-1", "a;b;c;d;e;f;g;h;i"), length_m="-1", install_date=" "),
        _row("M-7", ("mgmt-1", "Gi4"), ("mgmt-1", "Gi1"), length_m="0", role="BREAKOUT", kind="cat6a"),
        _row("M-8", ("gpu-1", "eth9"), ("nodev", "x1"), kind="SMF-OS2", vendor="Acme"),
        _row("M-9", ("mgmt-1", "Gi3"), ("mgmt-1", "Gi4")),
        _row("S-10", ("gpu-1", "eth3"), ("leaf-1", "Ethernet2/1"), kind="SMF_OS2"),
        _row("M-11", ("mgmt-1", "Gi1"), ("mgmt-1", "Gi4"), status="INSTALLED", install_date="2026-10-01"),
        _row("M-1", ("mgmt-1", "Gi4"), ("mgmt-1", "Gi2")),
        _row("RET", ("mgmt-1", "Gi4"), ("mgmt-1", "Gi2")),
        _row("OLD", ("gpu-1", "eth3"), ("leaf-1", "Ethernet2/1"), kind="SMF_OS2"),
        _row(
            "S-15",
            ("gpu-1", "eth0"),
            ("leaf-1", "Ethernet1/1"),
            kind="SMF_OS2",
            a_connector="lc",
            b_fibres=24,
        ),
        _row("S-16", ("gpu-1", "eth1"), ("pp-1", "Front 1"), kind="SMF_OS2", a_polish="upc", b_polish="UPC"),
        _row("D-17", ("leaf-1", "Ethernet1/2"), ("sw-empty", "OSFP1"), kind="DAC", polarity=""),
        _row("D-18", ("sw-empty", "OSFP2"), ("sw-empty", "OSFP1/5"), kind="DAC"),
        _row("D-19", ("sw-empty", "swp4"), ("sw-empty", "OSFP1/2"), kind="DAC", b_pinned="no", notes=" hi "),
    ]
    assert _results(rows) == [
        (1, "M-1", "create", [], {}),
        (
            2,
            "bad label",
            "error",
            [
                ("label", "1-64 characters: letters, digits and . _ : + - (no spaces or slashes)."),
                (
                    "kind",
                    "Unknown cable kind 'copper'; one of SMF_OS2, MMF_OM3, MMF_OM4, MMF_OM5, DAC, ACC, AOC, CAT6A.",
                ),
                ("a_device", "Required."),
                ("a_port", "Required."),
                ("b_device", "Required."),
                ("b_port", "Required."),
                ("role", "Unknown role 'weird'; one of breakout, direct, jumper, trunk."),
                ("polarity", "Unknown polarity 'Z'; one of A, B, C, AB, AA."),
                ("length_m", "Not a number: 'x'."),
                ("install_date", "Not a date (YYYY-MM-DD): '2026-13-01'."),
                (
                    "status",
                    "A plan imports cables as planned or installed; later states come from tests and the gate.",
                ),
                ("part_number", "At most 100 characters."),
                ("serial_a", "At most 100 characters."),
                ("serial_b", "At most 100 characters."),
                ("lot", "At most 40 characters."),
                ("notes", "At most 2000 characters."),
                ("a_connector", "Unknown connector 'SC'; one of LC, MPO, RJ45, none."),
                ("a_fibres", "A fibre count from 1 to 32."),
                ("a_pinned", "yes/no."),
                ("a_polish", "UPC or APC."),
                ("b_fibres", "A fibre count from 1 to 32."),
            ],
            {},
        ),
        (
            3,
            "",
            "error",
            [
                ("label", "Required."),
                (
                    "kind",
                    "Unknown cable kind None; one of SMF_OS2, MMF_OM3, MMF_OM4, MMF_OM5, DAC, ACC, AOC, CAT6A.",
                ),
                ("a_device", "Required."),
                ("a_port", "Required."),
                ("b_device", "Required."),
                ("b_port", "Required."),
            ],
            {},
        ),
        (
            4,
            "",
            "error",
            [
                ("label", "Required."),
                (
                    "kind",
                    "Unknown cable kind None; one of SMF_OS2, MMF_OM3, MMF_OM4, MMF_OM5, DAC, ACC, AOC, CAT6A.",
                ),
                ("a_device", "Required."),
                ("a_port", "Required."),
                ("b_device", "Required."),
                ("b_port", "Required."),
            ],
            {},
        ),
        (
            5,
            "T-1",
            "error",
            [
                ("row", "runs through patch panels"),
                (
                    "kind",
                    "Unknown cable kind None; one of SMF_OS2, MMF_OM3, MMF_OM4, MMF_OM5, DAC, ACC, AOC, CAT6A.",
                ),
                ("a_device", "Required."),
                ("a_port", "Required."),
                ("b_device", "Required."),
                ("b_port", "Required."),
            ],
            {},
        ),
        (
            6,
            "M-6",
            "error",
            [("b_port", "A breakout has 2 to 8 legs."), ("length_m", "Must be positive.")],
            {},
        ),
        (7, "M-7", "error", [("length_m", "Must be positive.")], {}),
        (
            8,
            "M-8",
            "error",
            [
                ("vendor", "Unknown vendor 'Acme'."),
                ("a_port", "Unknown port gpu-1:eth9 (gpu-1 has no port or cage of that name)."),
                ("b_port", "Unknown device nodev."),
            ],
            {},
        ),
        (9, "M-9", "error", [("a_port", "mgmt-1:Gi3 is retired.")], {}),
        (10, "S-10", "error", [("b_port", "leaf-1:Ethernet2/1 is already cabled (OLD).")], {}),
        (
            11,
            "M-11",
            "error",
            [("a_port", "mgmt-1:Gi1 is used by row 1 too."), ("b_port", "mgmt-1:Gi4 is used by row 9 too.")],
            {},
        ),
        (12, "M-1", "error", [("label", "Label repeated (row 1).")], {}),
        (13, "RET", "error", [("label", "RET is retired; a new cable needs a new label.")], {}),
        (14, "OLD", "error", [("label", "OLD exists with other ends; retire or replace it first.")], {}),
        (
            15,
            "S-15",
            "error",
            [
                ("a_connector", "Module MMS4X00-NM (400GBASE-DR4) takes MPO."),
                ("b_fibres", "Module MMS4X00-NM takes MPO-12."),
            ],
            {},
        ),
        (
            16,
            "S-16",
            "error",
            [("a_polish", "Module MMS4X00-NM is APC."), ("b_polish", "Port Front 1 is APC.")],
            {},
        ),
        (
            17,
            "D-17",
            "error",
            [("a_port", f"Cage holds module {leaf_module}; a DAC plugs into an empty cage.")],
            {},
        ),
        (
            18,
            "D-18",
            "error",
            [("b_port", "Unknown port sw-empty:OSFP1/5 (sw-empty has no port or cage of that name).")],
            {},
        ),
        (19, "D-19", "create", [], {}),
    ]


def test_a_recorded_cable_reads_as_a_change_or_unchanged(plant):
    same = _row("OLD", ("gpu-1", "eth2"), ("leaf-1", "Ethernet2/1"), kind="SMF_OS2", polarity="B")
    assert _results([same]) == [(1, "OLD", "unchanged", [], {})]
    out = _results([{**same, "length_m": "7", "polarity": "", "serial_a": "X1"}])
    assert out == [
        (
            1,
            "OLD",
            "change",
            [],
            {
                "length_m": {"old": None, "new": "7.00"},
                "polarity": {"old": "B", "new": ""},
                "serial_a": {"old": "", "new": "X1"},
            },
        )
    ]


def _live_and_history(model, ids):
    """Each row of ``model`` in ``ids`` with the values of its history rows (concrete fields)."""
    hist = model.history.model
    names = [f.attname for f in model._meta.concrete_fields]
    live = {r["id"]: r for r in model.objects.filter(pk__in=ids).values(*names)}
    past = list(
        hist.objects.filter(id__in=ids).values(
            *names, "history_type", "history_change_reason", "history_user"
        )
    )
    return live, past


def test_an_applied_plan_writes_every_value_and_one_history_row_each(plant):
    """What a user reads back: the cables, ends and links as the plan said, each with a '+' history
    row by the importing user that holds the same values."""
    user = f.person("importer", role="engineer")  # imports are an engineer's action (the one policy)
    rows = [
        _row("M-1", ("mgmt-1", "Gi1"), ("mgmt-1", "Gi2"), vendor="nvidia", length_m="3.456", a_pinned="yes"),
        _row("D-2", ("sw-empty", "swp4"), ("sw-empty", "OSFP1/2"), kind="DAC", b_pinned="no", notes="hi"),
        _row(
            "S-3", ("gpu-1", "eth1"), ("pp-1", "Front 2;Front 3"), kind="SMF_OS2", install_date="2026-10-01"
        ),
        _row(
            "S-4",
            ("gpu-1", "eth0"),
            ("leaf-1", "Ethernet1/1"),
            kind="SMF_OS2",
            polarity="a",
            status="planned",
        ),
    ]
    result = cable_plan_import(rows=rows, dry_run=False, actor=user)
    assert result.applied and not result.errors
    cables = Cable.objects.filter(label__in=["M-1", "D-2", "S-3", "S-4"]).order_by("label")
    assert [
        (
            c.label,
            c.kind,
            c.role,
            c.polarity,
            c.length_m,
            c.vendor.name if c.vendor else None,
            c.status,
            c.install_date,
            c.notes,
            c.site.name if c.site else None,
        )
        for c in cables
    ] == [
        ("D-2", "DAC", "direct", "", None, None, "planned", None, "hi", "Hall Test"),
        ("M-1", "CAT6A", "direct", "", Decimal("3.46"), "NVIDIA", "planned", None, "", "Hall Test"),
        ("S-3", "SMF_OS2", "breakout", "", None, None, "installed", date(2026, 10, 1), "", "Hall Test"),
        ("S-4", "SMF_OS2", "direct", "A", None, None, "planned", None, "", "Hall Test"),
    ]
    ends = CableEnd.objects.filter(cable__in=cables).order_by("cable__label", "side", "leg")
    assert [
        (
            e.cable.label,
            e.side,
            e.leg,
            e.label,
            e.connector_type,
            e.fibre_count,
            e.pinned,
            e.polish,
            e.cage.name if e.cage else None,
            e.connector,
            e.port.name if e.port else None,
            e.active,
        )
        for e in ends
    ] == [
        ("D-2", "A", 0, "", "none", None, None, "", "OSFP2", 2, None, True),
        ("D-2", "B", 0, "", "none", None, False, "", "OSFP1", 2, None, True),
        ("M-1", "A", 0, "", "RJ45", None, True, "", None, None, "Gi1", True),
        ("M-1", "B", 0, "", "RJ45", None, None, "", None, None, "Gi2", True),
        ("S-3", "A", 0, "", "", None, None, "", "OSFP1", 2, None, True),
        ("S-3", "B", 1, "S-3-1", "MPO", None, None, "", None, None, "Front 2", True),
        ("S-3", "B", 2, "S-3-2", "MPO", None, None, "", None, None, "Front 3", True),
        ("S-4", "A", 0, "", "", None, None, "", "OSFP1", 1, None, True),
        ("S-4", "B", 0, "", "", None, None, "", "OSFP1", 1, None, True),
    ]
    links = LinkSegment.objects.filter(cable__in=cables).select_related("link__a_port", "link__b_port")
    assert sorted(
        (
            s.cable.label,
            s.seq,
            s.link.a_port.name,
            s.link.b_port.name,
            s.link.speed_gbps,
            s.link.lanes,
            s.link.fec,
        )
        for s in links
    ) == [
        ("D-2", 0, "swp2", "swp4", 400, 4, "RS544"),
        ("M-1", 0, "Gi1", "Gi2", None, 1, "none"),
        ("S-4", 0, "eth0", "Ethernet1/1", 400, 4, "RS544"),
    ]
    for model, ids in (
        (Cable, [c.pk for c in cables]),
        (CableEnd, [e.pk for e in ends]),
        (Link, [s.link_id for s in links]),
    ):
        live, past = _live_and_history(model, ids)
        assert len(past) == len(live) == len(ids), model
        for h in past:
            assert (h.pop("history_type"), h.pop("history_change_reason"), h.pop("history_user")) == (
                "+",
                "cable plan import",
                user.pk,
            )
            assert h == live[h["id"]], model
