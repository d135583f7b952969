"""Due dates recomputed from the database, set-based, with history.

rack R-DD: [gpu-dd eth0]--F-1 (OS2 jumper)--[leaf-dd Ethernet1/1]
           [gpu-dd eth1]--D-1 (DAC)--------[leaf-dd Ethernet1/2]
"""

from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.choices import AlertRule, CableKind, CableStatus, RetestTriggerReason
from inventory.models import Alert, Cable, Link, RetestPolicy
from inventory.services.plant import cables as cable_services
from inventory.services.retests import due as retests
from tests import factories as f

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def plant():
    rack = f.RackFactory(name="R-DD")
    _, gpu = f.twin_port_device("gpu-dd", rack=rack, u=3, role="gpu_node", with_modules=True)
    _, leaf = f.twin_port_device("leaf-dd", rack=rack, u=40)
    fibre = f.jumper("F-1", gpu[0], leaf[0], install_date=T0.date())
    _, gpu2 = f.twin_port_device("gpu-dd2", rack=rack, u=5, role="gpu_node", with_modules=False)
    _, leaf2 = f.twin_port_device("leaf-dd2", rack=rack, u=41, with_modules=False)
    dac, _ = cable_services.cable_install(
        label="D-1",
        kind=CableKind.DAC,
        a=cable_services.EndSpec(port=gpu2[0]),
        b=[cable_services.EndSpec(port=leaf2[0])],
        install_date=T0.date(),
    )
    return {"fibre": fibre, "dac": dac, "rack": rack}


def due(label):
    return Cable.objects.get(label=label).retest_due


def test_what_counts_follows_the_medium(plant):
    f.record_test(plant["fibre"], at=T0, kind="olts")
    f.record_test(plant["dac"], at=T0, kind="olts")  # a power meter says nothing about a sealed DAC
    retests.retest_due_recompute(now=T0 + timedelta(days=1))
    assert due("F-1") == (T0 + timedelta(days=90)).date()
    assert due("D-1") == T0.date()  # still due before production
    f.record_test(plant["dac"], at=T0 + timedelta(days=2), kind="qualification")
    retests.retest_due_recompute(now=T0 + timedelta(days=3))
    assert due("D-1") == (T0 + timedelta(days=92)).date()


def test_site_medium_and_link_class_intervals(plant):
    f.record_test(plant["fibre"], at=T0)
    f.record_test(plant["dac"], at=T0)
    site = plant["rack"].row.room.site
    site.retest_interval_days = 60
    site.save()
    RetestPolicy.objects.create(kind=CableKind.DAC, interval_days=180)
    retests.retest_due_recompute(now=T0)
    assert due("F-1") == (T0 + timedelta(days=60)).date()
    assert due("D-1") == (T0 + timedelta(days=60)).date()  # the site's interval is more specific
    RetestPolicy.objects.create(site=site, kind=CableKind.DAC, interval_days=120)
    link = Link.objects.get(segments__cable=plant["fibre"])
    link.link_class = "spine-uplink"
    link.save()
    RetestPolicy.objects.create(link_class="spine-uplink", interval_days=30)
    retests.retest_due_recompute(now=T0)
    assert due("D-1") == (T0 + timedelta(days=120)).date()
    assert due("F-1") == (T0 + timedelta(days=60)).date()  # site (60) is more specific than class (30)
    RetestPolicy.objects.create(site=site, link_class="spine-uplink", interval_days=30)
    retests.retest_due_recompute(now=T0)
    assert due("F-1") == (T0 + timedelta(days=30)).date()


@pytest.mark.parametrize("how", ["failed_test", "fault", "reseat", "loss_increase"])
def test_a_failure_a_fault_a_reseat_or_a_loss_increase_brings_the_retest_forward(plant, how):
    fibre = plant["fibre"]
    f.record_test(fibre, at=T0)
    retests.retest_due_recompute(now=T0)
    when = T0 + timedelta(days=20)
    if how == "failed_test":
        f.record_test(fibre, at=when, verdict="fail")
        retests.retest_due_recompute(now=when)
    elif how == "loss_increase":
        Alert.objects.create(
            rule=AlertRule.LOSS_INCREASE,
            severity="notify",
            cable=fibre,
            opened_at=when,
            updated_at=when,
            summary="+0.8 dB",
        )
        retests.retest_due_recompute(now=when)
    else:
        reason = RetestTriggerReason.FAULT if how == "fault" else RetestTriggerReason.RESEAT
        retests.retest_trigger_record(cable=fibre, reason=reason, now=when, note="dirty connector")
    assert due("F-1") == (when + timedelta(days=7)).date()
    link = Link.objects.get(segments__cable=fibre)
    assert link.retest_due == (when + timedelta(days=7)).date()


def test_a_trigger_on_a_retired_cable_or_with_a_bad_reason_is_refused(plant):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as bad:
        retests.retest_trigger_record(cable=plant["fibre"], reason="gremlins", now=T0)
    assert "reason" in bad.value.message_dict
    cable_services.cable_retire(cable=plant["dac"], reason="damaged", now=T0)
    with pytest.raises(ValidationError):
        retests.retest_trigger_record(cable=Cable.objects.get(label="D-1"), reason="fault", now=T0)


def test_planned_and_retired_cables_lose_their_due_date(plant):
    retests.retest_due_recompute(now=T0)
    assert due("D-1") == T0.date()
    cable_services.cable_retire(cable=plant["dac"], reason="swap", now=T0)
    retests.retest_due_recompute(now=T0 + timedelta(days=1))
    assert due("D-1") is None


def test_a_site_that_accepts_telemetry_skips_the_physical_retest_of_a_clean_live_link(plant):
    fibre = plant["fibre"]
    f.record_test(fibre, at=T0)
    fibre.status = CableStatus.IN_PRODUCTION  # in service since T0 (the gate reads today's clock)
    fibre.save()
    RetestPolicy.objects.create(site=plant["rack"].row.room.site, accept_telemetry=True)
    day85 = T0 + timedelta(days=85)
    retests.retest_due_recompute(now=day85)
    assert due("F-1") == (T0 + timedelta(days=180)).date()
    # An alert during the next interval: a physical retest is due at the end of it.
    Alert.objects.create(
        rule=AlertRule.FEC_DEGRADATION,
        severity="notify",
        cable=fibre,
        opened_at=T0 + timedelta(days=120),
        updated_at=T0 + timedelta(days=120),
        state="resolved",
        resolved_at=T0 + timedelta(days=121),
        summary="pre-FEC BER rising",
    )
    retests.retest_due_recompute(now=T0 + timedelta(days=175))
    assert due("F-1") == (T0 + timedelta(days=180)).date()


def test_the_recompute_is_set_based_and_keeps_history(plant, django_assert_max_num_queries):
    rack = plant["rack"]
    _, a = f.twin_port_device("gpu-many", rack=rack, u=10, role="gpu_node", cages=4)
    _, b = f.twin_port_device("leaf-many", rack=rack, u=30, cages=4)
    cables = [f.jumper(f"M-{i}", a[i], b[i], install_date=T0.date()) for i in range(8)]
    for c in cables:
        f.record_test(c, at=T0)
    # A fixed number of statements per batch, whatever the number of cables in it.
    with django_assert_max_num_queries(24):
        result = retests.retest_due_recompute(now=T0 + timedelta(days=1))
    assert result.cables_changed == 10  # the 8, the fibre and the DAC
    assert retests.retest_due_recompute(now=T0 + timedelta(days=2)).cables_changed == 0
    history = list(Cable.objects.get(label="M-3").history.order_by("history_id"))
    assert history[-1].retest_due == (T0 + timedelta(days=90)).date()
    assert history[-1].history_change_reason == "retest due recomputed"
    assert history[-1].history_type == "~"
    assert history[-2].retest_due is None


def test_a_fault_or_a_reseat_from_the_phone_page_brings_the_retest_forward(
    plant, django_capture_on_commit_callbacks
):
    from inventory.services.plant import fieldwork

    fibre = plant["fibre"]
    f.record_test(fibre, at=T0)
    retests.retest_due_recompute(now=T0)
    when = T0 + timedelta(days=30)
    with django_capture_on_commit_callbacks(execute=True):
        fieldwork.cable_serviced(cable=fibre, kind="reseated", text="re-seated both ends", now=when)
    retests.retest_due_recompute(now=when, reason="retest brought forward: fault reported")
    assert due("F-1") == (when + timedelta(days=7)).date()
    dac = plant["dac"]
    f.record_test(dac, at=T0)
    retests.retest_due_recompute(now=T0)
    with django_capture_on_commit_callbacks(execute=True):
        fieldwork.cable_fault_report(cable=dac, seen="link light off", status=CableStatus.FAULTY, now=when)
    retests.retest_due_recompute(now=when, reason="retest brought forward: fault reported")
    assert due("D-1") == (when + timedelta(days=7)).date()
    history = Cable.objects.get(label="D-1").history.order_by("-history_id").first()
    assert history.history_change_reason == "retest brought forward: fault reported"
