"""Every cable kind, exported in every dialect, imports back unchanged (issue 32).

    [rt-a OSFP1..4, 8 empty-cage ports]--RT-<KIND> (one cable per kind)--[rt-b OSFP1..4]

The cables are created by a plan import (as an engineer would), exported as YAML, plan CSV,
NetBox's cable CSV and the expected-topology list, and each export is imported back: a dry run
says every cable is unchanged, and applying it changes no recorded value.
"""

import pytest

from inventory.core.choices import CableKind, DeviceRole
from inventory.models import Cable, CableEnd
from tests import factories as f

pytestmark = pytest.mark.django_db

CONNECTOR = {
    CableKind.SMF_OS2: ("MPO", "12", "no", "APC"),
    CableKind.MMF_OM3: ("MPO", "12", "yes", "UPC"),
    CableKind.MMF_OM4: ("LC", "2", "", "UPC"),
    CableKind.MMF_OM5: ("LC", "2", "", "UPC"),
    CableKind.DAC: ("none", "", "", ""),
    CableKind.ACC: ("none", "", "", ""),
    CableKind.AOC: ("none", "", "", ""),
    CableKind.CAT6A: ("RJ45", "", "", ""),
}
POLARITY = {CableKind.SMF_OS2: "B", CableKind.MMF_OM3: "A", CableKind.MMF_OM4: "AB", CableKind.MMF_OM5: "AB"}


def _plan_csv() -> str:
    cols = (
        "label,kind,a_device,a_port,b_device,b_port,polarity,length_m,vendor,part_number,serial_a,"
        "serial_b,install_date,status,notes,a_connector,a_fibres,a_pinned,a_polish,b_connector,"
        "b_fibres,b_pinned,b_polish"
    )
    lines = [cols]
    for i, kind in enumerate(CableKind.values):
        conn, fibres, pinned, polish = CONNECTOR[kind]
        sealed = kind in CableKind.sealed()
        lines.append(
            ",".join(
                [
                    f"RT-{kind.replace('_', '-')}",
                    kind,
                    "rt-a",
                    f"Ethernet{i // 2 + 1}/{i % 2 + 1}",
                    "rt-b",
                    f"Ethernet{i // 2 + 1}/{i % 2 + 1}",
                    POLARITY.get(kind, ""),
                    f"{i + 1}.50",
                    "Acme",
                    f"PN-{kind}",
                    f"SA-{i}" if sealed else "",
                    f"SB-{i}" if sealed else "",
                    "2026-10-0" + str(i % 9 + 1),
                    "installed",
                    f"note {i}",
                    conn,
                    fibres,
                    pinned,
                    polish,
                    conn,
                    fibres,
                    pinned,
                    polish,
                ]
            )
        )
    return "\n".join(lines) + "\n"


def _recorded() -> list:
    """Everything a round trip could change, cable by cable and end by end."""
    cables = list(
        Cable.objects.order_by("label").values_list(
            "label", "kind", "role", "polarity", "length_m", "vendor__name", "part_number",
            "serial_a", "serial_b", "install_date", "status", "notes",
        )
    )  # fmt: skip
    ends = list(
        CableEnd.objects.filter(active=True)
        .order_by("cable__label", "side", "leg")
        .values_list(
            "cable__label", "side", "port_id", "cage_id", "connector", "connector_type", "fibre_count",
            "pinned", "polish",
        )
    )  # fmt: skip
    return [cables, ends]


@pytest.fixture
def plant(engineer_api):
    f.VendorFactory(name="Acme")
    for name in ("rt-a", "rt-b"):
        f.twin_port_device(name, cages=4, with_modules=False, role=DeviceRole.LEAF)
    r = engineer_api.generic("POST", "/api/cables/import/?dry_run=0", _plan_csv(), content_type="text/csv")
    assert r.status_code == 201, [x["errors"] for x in r.json()["rows"]]
    assert Cable.objects.count() == len(CableKind.values)
    assert CableEnd.objects.filter(cable__kind=CableKind.DAC, connector_type="none").count() == 2


EXPORTS = {
    # dialect: (export URL, import URL, content type)
    "yaml": ("/api/cables/export/?as=yaml", "/api/cables/import/", "application/yaml"),
    "csv": ("/api/cables/export/?as=csv", "/api/cables/import/", "text/csv"),
    "netbox": ("/api/cables/export/?as=netbox", "/api/cables/import/?dialect=netbox", "text/csv"),
    "topology": ("/api/topology/txt/", "/api/cables/import/", "text/plain"),
}


@pytest.mark.parametrize("dialect", EXPORTS)
def test_every_cable_kind_round_trips_unchanged_in_every_export_dialect(engineer_api, plant, dialect):
    export_url, import_url, ctype = EXPORTS[dialect]
    before = _recorded()
    exported = engineer_api.get(export_url)
    assert exported.status_code == 200
    body = exported.content.decode()
    if dialect == "netbox":
        assert exported["X-Not-Exported-Count"] == "0"
    sep = "&" if "?" in import_url else "?"
    dry = engineer_api.generic("POST", f"{import_url}{sep}dry_run=1", body, content_type=ctype)
    assert dry.status_code == 200, dry.json()
    summary = dry.json()["summary"]
    assert summary == {"create": 0, "change": 0, "unchanged": len(CableKind.values), "error": 0}, [
        r for r in dry.json()["rows"] if r["action"] != "unchanged"
    ]
    applied = engineer_api.generic("POST", f"{import_url}{sep}dry_run=0", body, content_type=ctype)
    assert applied.status_code in (200, 201), applied.json()
    assert _recorded() == before


def test_a_connector_word_is_read_whatever_its_case(engineer_api, plant):
    """``none`` as exported, ``NONE`` or ``None`` as a spreadsheet writes it: the same connector."""
    csv_text = engineer_api.get("/api/cables/export/?as=csv").content.decode()
    shouted = csv_text.replace(",none,", ",NONE,").replace(",LC,", ",lc,")
    assert shouted != csv_text
    dry = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", shouted, content_type="text/csv")
    assert dry.status_code == 200, dry.json()
    assert dry.json()["summary"]["unchanged"] == len(CableKind.values)
    bad = shouted.replace(",NONE,", ",SC,", 1)
    refused = engineer_api.generic("POST", "/api/cables/import/?dry_run=1", bad, content_type="text/csv")
    assert refused.status_code == 400
    assert "Unknown connector 'SC'" in str(refused.json())
