"""Link verdicts (TIA per segment, PMD per channel), the commissioning report over a seeded
cluster in a fixed number of queries, and the cable page's test panel."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.template.loader import render_to_string

from inventory.core.choices import DeviceRole, Polarity, Verdict
from inventory.models import Link
from inventory.selectors.pages.commissioning import commissioning_report
from inventory.selectors.testing.results import cable_tests_context, link_verdicts
from inventory.services import testing as svc
from inventory.services.demo.seed import demo_seed
from tests import factories as f

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 11, 1, 10, 0, tzinfo=UTC)


def olts(cable, loss, n=8):
    readings = [svc.FibreReading(fibre=i, wavelength_nm=1310, loss_db=loss) for i in range(1, n + 1)]
    return svc.cable_test_record_olts(
        cable=cable, data=svc.OltsInput(readings=readings, tested_at=NOW), now=NOW
    )


def test_link_passes_tia_but_fails_its_pmd_and_the_page_says_so():
    """
    [gpu-1 eth1]--C-1--[pp-a F1 | R1]==T-1==[R1 | F1 pp-b]--C-2--[leaf-01 Ethernet2/1]   400GBASE-DR4, 3.0 dB
    Each segment loses 1.1 dB: within its 1.5 dB TIA budget, but 3.3 dB over the channel.
    """
    rack_a, rack_b = f.RackFactory(name="A01"), f.RackFactory(name="B01")
    _, gpu = f.twin_port_device(
        "gpu-1", rack=rack_a, u=10, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-01", rack=rack_b, u=46)
    _, pa_rear, pa_front = f.patch_panel("pp-a", rack=rack_a)
    _, pb_rear, pb_front = f.patch_panel("pp-b", rack=rack_b)
    c1 = f.jumper("C-1", gpu[1], pa_front[0], polarity=Polarity.A, length_m=Decimal("3"))
    t1 = f.trunk("T-1", pa_rear[0], pb_rear[0], polarity=Polarity.B)
    c2 = f.jumper("C-2", pb_front[0], leaf[2], polarity=Polarity.A, length_m=Decimal("3"))
    for c in (c1, t1, c2):
        assert olts(c, 1.1, n=24 if c is t1 else 8).verdict == Verdict.PASS
    link = Link.objects.get(active=True, a_port__in=[gpu[1], leaf[2]])
    lv = link_verdicts(links=[link])[link.pk]
    assert lv.tia_verdict == Verdict.PASS
    assert lv.pmd_verdict == Verdict.FAIL and lv.channel_loss_db == pytest.approx(3.3)
    assert lv.channel_limit_db == 3.0 and "802.3bs" in lv.channel_source
    assert "fails its PMD" in lv.note
    html = render_to_string("inventory/_cable_tests.html", cable_tests_context(t1))
    assert "Every segment passes TIA-568.3" in html and "fails its PMD" in html
    report = commissioning_report(rack=rack_a, now=NOW)
    assert report.counts["pmd_fail_tia_pass"] == 1
    # the trunk has no recorded length, so it also needs an OTDR before production
    assert any("T-1: needs an OTDR trace (length not recorded)" in b for b in report.links[0].blockers)


def test_commissioning_report_of_a_seeded_cluster_is_set_based(django_assert_max_num_queries):
    demo_seed(gpus=64, seed=3)
    links = list(Link.objects.filter(active=True))
    assert len(links) > 20
    with django_assert_max_num_queries(12):
        verdicts = link_verdicts(links=links)
    assert len(verdicts) == len(links)
    # the counts: the scope's ids to a temporary table (drop, create, fill; on PostgreSQL also
    # ANALYZE and the statement's settings), its PMDs, one statement, drop; then the page's
    # links and their verdicts as above, and what holds the page's cables out of production
    # (their status, open alerts, open faults and when each faulted cable was last tested,
    # drains: ``cable_holds``): a number that does not grow with the cluster
    with django_assert_max_num_queries(27):
        report = commissioning_report()
    assert report.counts["links"] == len(links)
    kinds = {s.kind for lv in report.links for s in lv.segments}
    assert {"SMF_OS2", "DAC"} <= kinds
    # demo trunks carry OTDR summaries and DACs a qualification, so only the tests themselves
    # (failed or overdue) can block a demo link, never a missing OTDR or qualification
    assert not any("an OTDR trace" in b and "newer" not in b for lv in report.links for b in lv.blockers)
    assert not any("link qualification (EEPROM" in b for lv in report.links for b in lv.blockers)
