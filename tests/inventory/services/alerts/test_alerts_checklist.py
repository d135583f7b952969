"""Issue 5 checklist items that had no test of their own: the evidence names each segment's last
test and margin and the least-margin segment is the one moved to "degraded"; thresholds chosen
per PMD through the settings; vendor comparison by module temperature band.

Topology (from ``test_alerts.py``)::

    [gpu-a eth0]--J-0--[leaf-a Ethernet1/1]
    [gpu-a eth1]--J-1--[leaf-a Ethernet1/2]
    [leaf-a Ethernet2/1]--J-U1--[pp-1 F1]==T-1==[pp-2 F1]--J-U2--[spine-a Ethernet1/1]
"""

from datetime import timedelta
from html import unescape

import pytest
from django.test import Client
from django.utils import timezone

from inventory.core.choices import CableStatus, Verdict
from inventory.core.choices import TestKind as Kind
from inventory.models import Alert, Cable, CableTest, Port
from inventory.selectors.alerts.queries import vendor_comparison
from inventory.services import alerts as svc
from tests import factories as f
from tests.inventory.services.alerts.test_alerts import T0, healthy
from tests.inventory.services.alerts.test_alerts import plant as plant  # noqa: F401 - fixture
from tests.inventory.views.conftest import without_name_spans

pytestmark = pytest.mark.django_db


def _olts(label: str, loss: float, margin: float, days_ago: int = 30):
    CableTest.objects.create(
        cable=Cable.objects.get(label=label),
        kind=Kind.OLTS,
        tested_at=T0 - timedelta(days=days_ago),
        wavelength_nm=1310,
        loss_db=loss,
        budget_db=loss + margin,
        margin_db=margin,
        verdict=Verdict.PASS,
    )


def test_the_evidence_names_each_segments_last_test_and_the_cable_at_the_receiving_end_degrades(plant):  # noqa: F811
    """The spine's receiver sees the errors: the alert degrades J-U2, the cable plugged at that end
    (where its page sends the technician first: ``core.alert_ends.alert_cable``), and only J-U2;
    the trunk's thin margin is in the evidence and on the page's path."""
    _olts("J-U1", 0.4, 2.6)
    _olts("T-1", 2.7, 0.3)  # the trunk barely passed: said in the evidence
    _olts("J-U2", 0.5, 2.5)
    healthy(plant, T0 - timedelta(minutes=12), 12, skip=[plant["spine"][0]])
    f.rollups(plant["spine"][0], T0 - timedelta(minutes=12), 12, ber=5e-5)
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get()
    segs = {s["label"]: s["last_test"] for s in alert.evidence["segments"]}
    assert segs["T-1"]["margin_db"] == pytest.approx(0.3) and segs["T-1"]["loss_db"] == pytest.approx(2.7)
    assert (
        segs["J-U1"]["kind"] == Kind.OLTS
        and segs["J-U2"]["date"] == (T0 - timedelta(days=30)).date().isoformat()
    )
    assert alert.cable.label == "J-U2"
    statuses = dict(Cable.objects.filter(label__in=["J-U1", "T-1", "J-U2"]).values_list("label", "status"))
    assert statuses == {
        "J-U1": CableStatus.IN_PRODUCTION,
        "T-1": CableStatus.IN_PRODUCTION,
        "J-U2": CableStatus.DEGRADED,
    }
    page = Client()
    page.force_login(f.UserFactory(username="eng-ev", role="engineer"))
    html = page.get(f"/alerts/{alert.pk}/").content.decode()
    assert "T-1" in html and "0.3" in html and "2.7" in html


def test_thresholds_follow_the_links_pmd_from_settings(plant, settings):  # noqa: F811
    """Six minutes of a 400x BER rise: under the default 10-minute hold nothing yet; a
    400GBASE-DR4 profile holding 5 minutes alerts that link."""
    healthy(plant, T0 - timedelta(minutes=30), 30)
    svc.alerts_evaluate(now=T0)  # baselines
    later = T0 + timedelta(minutes=6)
    for p in (*plant["gpu"][:2], plant["leaf"][0], plant["leaf"][2], plant["spine"][0]):
        f.rollups(p, T0, 6)
    f.rollups(plant["leaf"][1], T0, 6, ber=2e-6)
    assert plant["links"]["l1"].pmd == "400GBASE-DR4"
    svc.alerts_evaluate(now=later)
    assert not Alert.objects.exists()
    settings.CABLETRACK_ALERT_RULES = {"preset": "default", "by_pmd": {"400GBASE-DR4": {"fec_hold_s": 300}}}
    svc.alerts_evaluate(now=later)
    alert = Alert.objects.get()
    assert (alert.rule, alert.link_id) == ("fec_degradation", plant["links"]["l1"].pk)
    # Another PMD's profile does not apply to this link.
    Alert.objects.all().delete()
    settings.CABLETRACK_ALERT_RULES = {"preset": "default", "by_pmd": {"400GBASE-FR4": {"fec_hold_s": 300}}}
    svc.alerts_evaluate(now=later)
    assert not Alert.objects.filter(state="open").exists()


def test_vendor_comparison_by_module_temperature_band_and_by_model_within_a_band(plant):  # noqa: F811
    """Hot (72 °C) NVIDIA modules in gpu-a OSFP1 correct far more than the cool rest; the ACME
    module in spine-a OSFP1 runs just as hot and stays clean: NVIDIA's degrade under heat."""
    from inventory.services.plant.transceivers import transceiver_swap

    acme = f.twin_dr4_model(vendor="ACME", part="ACME-DR4")
    transceiver_swap(cage=plant["spine"][0].cage, new=f.module(model=acme, serial="ACME-1"))
    now = timezone.now().replace(second=0, microsecond=0)  # the API and the page read "now"
    start = now - timedelta(hours=2)
    hot_bad = {plant["gpu"][0].pk, plant["gpu"][1].pk}
    hot_good = {plant["spine"][0].pk, plant["spine"][1].pk}
    for p in (*plant["gpu"], *plant["leaf"], *plant["spine"]):
        if p.pk in hot_bad:
            f.rollups(p, start, 60, ber=5e-7, temperature_max_c=72.0)
        elif p.pk in hot_good:
            f.rollups(p, start, 60, temperature_max_c=72.0)
        else:
            f.rollups(p, start, 60, temperature_max_c=35.0)
    data = vendor_comparison(now=now, days=1)
    bands = {b["band"]: b for b in data["by_temperature"]}
    assert bands["≥ 70 °C"]["ports"] == 4 and bands["< 40 °C"]["ports"] >= 4
    cross = {(x["vendor"], x["band"]): x for x in data["by_model_temperature"]}
    nv_hot, nv_cool, acme_hot = (
        cross[("NVIDIA", "≥ 70 °C")],
        cross[("NVIDIA", "< 40 °C")],
        cross[("ACME", "≥ 70 °C")],
    )
    assert (nv_hot["ports"], acme_hot["ports"]) == (2, 2)
    assert nv_hot["median_cw_rate"] > 50 * nv_cool["median_cw_rate"]
    assert nv_hot["median_cw_rate"] > 50 * acme_hot["median_cw_rate"]
    assert ("ACME", "< 40 °C") not in cross
    by_model = {g["model"]: g for g in data["by_model"]}
    assert (by_model["ACME-DR4"]["ports"], by_model["ACME-DR4"]["ports_reporting"]) == (2, 2)
    assert (
        by_model["MMS4X00-NM"]["ports"]
        == Port.objects.filter(cage__transceiver__model__part_number="MMS4X00-NM").count()
    )
    api = f.api_token_client(f.UserFactory(username="viewer-vc", role="viewer"), kind="read_only")
    body = api.get("/api/vendor-comparison/?days=1").json()
    assert {b["band"] for b in body["by_temperature"]} >= {"≥ 70 °C", "< 40 °C"}
    assert {(x["model"], x["band"]) for x in body["by_model_temperature"]} >= {
        ("MMS4X00-NM", "≥ 70 °C"),
        ("ACME-DR4", "≥ 70 °C"),
    }
    page = Client()
    page.force_login(f.UserFactory(username="eng-vc", role="engineer"))
    html = page.get("/vendors/compare/?days=1").content.decode()
    table = html.split('id="by-model-temperature"', 1)[1].split("</table>", 1)[0]
    assert "ACME-DR4" in table and "≥ 70 °C" in table


def test_vendor_comparison_counts_an_alert_and_divides_by_ports_the_same_way_in_every_table(plant):  # noqa: F811
    """One alert on each of the plant's three links; every module port that reports sits at
    45 °C but leaf-a Ethernet1/2 at 72 °C; spine-a's second ACME port reports nothing::

        [gpu-a eth0 NVIDIA]--J-0--[leaf-a Ethernet1/1 NVIDIA]                 alert
        [gpu-a eth1 NVIDIA]--J-1--[leaf-a Ethernet1/2 NVIDIA, 72 °C]          alert
        [leaf-a Ethernet2/1 NVIDIA]--J-U1..T-1..J-U2--[spine-a Ethernet1/1 ACME]  alert

    An alert counts at each reporting end, in that end's model and band, so the bands add up to
    the models and to the models within bands; each "per 100" divides by reporting ports, so
    ACME (2 installed, 1 reporting, 1 alert) reads 100.0 by model as within its band.
    """
    from inventory.core.choices import AlertState, Severity
    from inventory.services.plant.transceivers import transceiver_swap

    acme = f.twin_dr4_model(vendor="ACME", part="ACME-DR4")
    transceiver_swap(cage=plant["spine"][0].cage, new=f.module(model=acme, serial="ACME-1"))
    now = timezone.now().replace(second=0, microsecond=0)
    start = now - timedelta(hours=2)
    gpu, leaf, spine = plant["gpu"], plant["leaf"], plant["spine"]
    for p in (gpu[0], gpu[1], leaf[0], leaf[2], spine[0]):
        f.rollups(p, start, 60, temperature_max_c=45.0)
    f.rollups(leaf[1], start, 60, temperature_max_c=72.0)
    for name, link in plant["links"].items():
        Alert.objects.create(
            key=f"vc-{name}",
            rule="fec_degradation",
            severity=Severity.WARNING,
            state=AlertState.OPEN,
            link=link,
            opened_at=now - timedelta(hours=1),
            updated_at=now,
            summary="test",
        )
    data = vendor_comparison(now=now, days=1)
    tables = (data["by_model"], data["by_temperature"], data["by_model_temperature"])
    assert [sum(r["alerts"] for r in rows) for rows in tables] == [6, 6, 6]
    assert [sum(r["ports_reporting"] for r in rows) for rows in tables] == [6, 6, 6]
    for b in data["by_temperature"]:
        within = [x for x in data["by_model_temperature"] if x["band"] == b["band"]]
        assert b["alerts"] == sum(x["alerts"] for x in within), b["band"]
    for g in data["by_model"]:
        within = [x for x in data["by_model_temperature"] if x["model"] == g["model"]]
        assert g["alerts"] == sum(x["alerts"] for x in within), g["model"]
    for row in (r for rows in tables for r in rows):
        reporting = row["ports_reporting"]
        assert row["alerts_per_100_ports"] == (
            round(100 * row["alerts"] / reporting, 2) if reporting else None
        )
    by_model = {g["model"]: g for g in data["by_model"]}
    acme_row = by_model["ACME-DR4"]
    assert (acme_row["ports"], acme_row["ports_reporting"], acme_row["alerts"]) == (2, 1, 1)
    cross = {(x["model"], x["band"]): x for x in data["by_model_temperature"]}
    assert (
        acme_row["alerts_per_100_ports"] == cross[("ACME-DR4", "40-50 °C")]["alerts_per_100_ports"] == 100.0
    )
    hot = {b["band"]: b for b in data["by_temperature"]}["≥ 70 °C"]
    assert (hot["ports_reporting"], hot["alerts"], hot["alerts_per_100_ports"]) == (1, 1, 100.0)

    # The page says the rule and shows ACME's 100.0 in both tables; the API schema says it too.
    from inventory.selectors.alerts.queries import VENDOR_ALERTS_COUNTED, VENDOR_PER_100_BASE

    page = Client()
    page.force_login(f.UserFactory(username="eng-vc2", role="engineer"))
    html = unescape(without_name_spans(page.get("/vendors/compare/?days=1").content.decode()))
    assert VENDOR_ALERTS_COUNTED in html and VENDOR_PER_100_BASE in html
    assert html.count("<th>per 100 reporting ports</th>") == 3 and "per 100 ports" not in html
    by_model_table, _, cross_table = html.split("<table", 3)[1:]
    assert "<td>ACME-DR4</td><td>2</td><td>1</td>" in by_model_table and "<td>100.0</td>" in by_model_table
    acme_in_band = cross_table.split("<td>ACME-DR4</td>", 1)[1].split("</tr>", 1)[0]
    assert "40-50 °C</td><td>1</td>" in acme_in_band and "<td>100.0</td>" in acme_in_band
    api = f.api_token_client(f.UserFactory(username="viewer-vc2", role="viewer"), kind="read_only")
    schema = api.get("/api/schema/?format=json").json()
    row = schema["components"]["schemas"]["VendorModelRow"]["properties"]
    assert row["alerts_per_100_ports"]["description"] == VENDOR_PER_100_BASE
    assert row["alerts"]["description"] == VENDOR_ALERTS_COUNTED


def test_an_alert_on_an_aoc_names_both_sealed_ends_and_recommends_replacing_the_cable(plant):  # noqa: F811
    """[leaf-c Ethernet1/1]==AOC-7 (ends AOC7-A / AOC7-B)==[spine-c Ethernet1/1]: its "modules"
    are the cable's two ends; errors at one receiver point at the cable itself."""
    from inventory.core.choices import CableKind
    from inventory.models import Link, Vendor
    from inventory.services.plant import cables as cable_services

    _, lc = f.twin_port_device("leaf-c", rack=plant["rack"], u=20, cages=1, with_modules=False)
    _, sc = f.twin_port_device("spine-c", rack=plant["rack"], u=21, cages=1, with_modules=False)
    aoc, _ = cable_services.cable_install(
        label="AOC-7",
        kind=CableKind.AOC,
        a=cable_services.EndSpec(port=lc[0]),
        b=[cable_services.EndSpec(port=sc[0])],
        vendor=Vendor.objects.get(name="NVIDIA"),
        part_number="MFA7U10-H003",
        serial_a="AOC7-A",
        serial_b="AOC7-B",
        status=CableStatus.IN_PRODUCTION,
    )
    link = Link.objects.get(active=True, segments__cable=aoc)
    healthy(plant, T0 - timedelta(minutes=12), 12)
    f.rollups(sc[0], T0 - timedelta(minutes=12), 12, ber=5e-5)
    f.rollups(lc[0], T0 - timedelta(minutes=12), 12)
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get(link=link)
    mods = alert.evidence["modules"]
    assert {(m["cable"], m["end"], m["serial"], m["part_number"]) for m in mods.values()} == {
        ("AOC-7", "A", "AOC7-A", "MFA7U10-H003"),
        ("AOC-7", "B", "AOC7-B", "MFA7U10-H003"),
    }
    assert alert.evidence["recommendation_code"] == "replace_cable"
    assert "replace AOC-7" in alert.recommendation and "sealed" in alert.recommendation
    assert Cable.objects.get(label="AOC-7").status == CableStatus.DEGRADED
    page = Client()
    page.force_login(f.UserFactory(username="eng-aoc", role="engineer"))
    html = without_name_spans(page.get(f"/alerts/{alert.pk}/").content.decode())
    assert "s/n AOC7-B (end B of the sealed cable AOC-7)" in html


def test_rx_power_under_the_modules_own_warning_threshold_pages(plant):  # noqa: F811
    """The leaf's module reports (EEPROM) an Rx low warning at -8 dBm; its receive power sits at
    -9.5 dBm for the window: a page, naming the module's own threshold, not a constant."""
    healthy(plant, T0 - timedelta(minutes=30), 30)
    svc.alerts_evaluate(now=T0)  # baselines at -2 dBm
    later = T0 + timedelta(minutes=12)
    f.seen(plant["leaf"][1], later, rx_low_warn_dbm=-8.0)
    for p in (*plant["gpu"][:2], plant["leaf"][0], plant["leaf"][2], plant["spine"][0]):
        f.rollups(p, T0, 12)
    f.rollups(plant["leaf"][1], T0, 12, rx_dbm=-9.5)
    svc.alerts_evaluate(now=later)
    alert = Alert.objects.get(rule="rx_power_drift")
    assert (alert.severity, alert.link_id) == ("page", plant["links"]["l1"].pk)
    (end,) = alert.evidence["ends"].values()
    assert end["module_rx_low_warn_dbm"] == -8.0 and end["below_module_warning"] is True
    assert "warning threshold" in alert.summary or "warning threshold" in alert.recommendation


def test_an_unrecorded_swap_alert_leads_to_the_racks_reconciliation(plant):  # noqa: F811
    healthy(plant, T0 - timedelta(minutes=5), 5)
    f.seen(plant["leaf"][1], T0 - timedelta(minutes=1), serial="INNO-NEW-0001")
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get(rule="unrecorded_swap")
    page = Client()
    page.force_login(f.UserFactory(username="eng-swap", role="engineer"))
    html = page.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'href="/reconciliation/?rack=R-ALERT"' in html
    report = page.get("/reconciliation/?rack=R-ALERT").content.decode()
    assert "INNO-NEW-0001" in report and ">swap<" in report
