"""Alert lifecycle over real rollup rows: evaluate, open once, update, resolve, silence, mail.

Topology (two GPU NICs on one leaf, plus one uplink through a panel pair)::

    [gpu-a eth0]--J-0--[leaf-a Ethernet1/1]            link 0: healthy
    [gpu-a eth1]--J-1--[leaf-a Ethernet1/2]            link 1: the one that degrades
    [leaf-a Ethernet2/1]--J-U1--[pp-1 F1]==T-1==[pp-2 F1]--J-U2--[spine-a Ethernet1/1]
"""

from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.choices import AlertState, CableStatus, DeviceRole
from inventory.core.telemetry.rules.frames import Finding
from inventory.models import Alert, AlertNotification, Cable, Link, MaintenanceWindow, PortBaseline, Team
from inventory.services import alerts as svc
from tests import factories as f

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.fixture
def plant():
    team = Team.objects.create(name="Hall ops", email="hall-ops@example.com")
    member = f.UserFactory(username="tech1", role="technician")
    member.email = "tech1@example.com"
    member.save()
    team.members.add(member)
    rack = f.RackFactory(name="R-ALERT")
    rack.team = team
    rack.save()
    _, gpu = f.twin_port_device(
        "gpu-a", rack=rack, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-a", rack=rack, u=30)
    _, spine = f.twin_port_device("spine-a", rack=f.RackFactory(name="R-SPINE"), u=1, role=DeviceRole.SPINE)
    _, _, fronts1 = f.patch_panel("pp-1", rack=rack, u=40)
    _, _, fronts2 = f.patch_panel("pp-2", rack=f.RackFactory(name="R-SPINE"), u=40)
    j0 = f.jumper("J-0", gpu[0], leaf[0])
    j1 = f.jumper("J-1", gpu[1], leaf[1])
    ju1 = f.jumper("J-U1", leaf[2], fronts1[0], polarity="A")
    t1 = f.trunk(
        "T-1", fronts1[0].device.ports.get(name="Rear 1"), fronts2[0].device.ports.get(name="Rear 1")
    )
    ju2 = f.jumper("J-U2", fronts2[0], spine[0])
    for c in (j0, j1, ju1, t1, ju2):
        c.status = CableStatus.IN_PRODUCTION
        c.save()
    links = {
        "l0": Link.objects.get(active=True, segments__cable=j0),
        "l1": Link.objects.get(active=True, segments__cable=j1),
        "up": Link.objects.get(active=True, segments__cable=t1),
    }
    return {"gpu": gpu, "leaf": leaf, "spine": spine, "links": links, "team": team, "rack": rack}


def healthy(plant, start, minutes, *, skip=()):
    for p in (*plant["gpu"][:2], *plant["leaf"][:3], plant["spine"][0]):
        if p not in skip:
            f.rollups(p, start, minutes)


def test_a_healthy_cluster_with_busy_fec_stays_quiet_and_learns_baselines(plant):
    healthy(plant, T0 - timedelta(minutes=30), 30)
    report = svc.alerts_evaluate(now=T0)
    assert report.ports == 6
    assert not Alert.objects.exists()
    assert PortBaseline.objects.count() == 6
    assert PortBaseline.objects.get(port=plant["leaf"][1]).pre_fec_ber == pytest.approx(5e-9, rel=0.01)


def test_a_learnt_baseline_moves_once_an_hour_and_never_while_its_link_is_alerted(plant):
    """Every run reads the window, but a port's baseline is refreshed only once it is
    ``CABLETRACK_BASELINE_REFRESH_S`` (an hour) old, as a slow average toward the
    newer healthy value; a receiver whose link has an open alert keeps its baseline."""
    healthy(plant, T0 - timedelta(minutes=15), 15)
    svc.alerts_evaluate(now=T0)
    port = plant["leaf"][1]
    assert PortBaseline.objects.get(port=port).pre_fec_ber == pytest.approx(5e-9, rel=0.01)

    # 30 min later the same receivers run at twice the BER (healthy still): too soon to move
    later = T0 + timedelta(minutes=30)
    for p in (*plant["gpu"][:2], *plant["leaf"][:3], plant["spine"][0]):
        f.rollups(p, later - timedelta(minutes=15), 15, ber=1e-8)
    svc.alerts_evaluate(now=later)
    b = PortBaseline.objects.get(port=port)
    assert (b.pre_fec_ber, b.updated_at) == (pytest.approx(5e-9, rel=0.01), T0)

    # an hour on it moves toward the newer value (in log space), but not on an alerted link
    alerted = plant["gpu"][0]  # its link (l0) has an open alert (a retest's, which the run keeps)
    svc.alert_raise(
        finding=Finding(
            key=f"loss_increase:link:{plant['links']['l0'].pk}",
            rule="loss_increase",
            severity="notify",
            link_id=plant["links"]["l0"].pk,
            port_id=alerted.pk,
            headline="loss up 0.6 dB",
            recommendation="",
            recommendation_code="",
        ),
        now=later,
    )
    hour = T0 + timedelta(minutes=61)
    for p in (*plant["gpu"][:2], *plant["leaf"][:3], plant["spine"][0]):
        f.rollups(p, hour - timedelta(minutes=15), 15, ber=1e-8)
    svc.alerts_evaluate(now=hour)
    b = PortBaseline.objects.get(port=port)
    assert 5e-9 * 1.01 < b.pre_fec_ber < 1e-8 * 0.99
    assert b.updated_at == hour
    kept = PortBaseline.objects.get(port=alerted)
    assert (kept.pre_fec_ber, kept.updated_at) == (pytest.approx(5e-9, rel=0.01), T0)


def test_an_alert_clears_with_no_new_sample_once_its_burst_leaves_the_window(plant):
    """A verdict depends on the time as well as on the data: a receiver that reported four
    minutes of uncorrectables, then six healthy minutes, then nothing, has its alert cleared by a
    later run that sees no new rollup at all (the burst has left the window, the healthy minutes
    are still in it). So every run judges every port with data in the window, not only the ports
    whose rollups changed since the previous run."""
    start = T0 - timedelta(minutes=20)
    for p in (*plant["gpu"][:2], plant["leaf"][0], *plant["leaf"][2:3], plant["spine"][0]):
        f.rollups(p, start, 10)
    f.rollups(plant["leaf"][1], start, 4, fec_uncorrectable_cw=5)
    f.rollups(plant["leaf"][1], start + timedelta(minutes=4), 6)

    svc.alerts_evaluate(now=start + timedelta(minutes=10))
    alert = Alert.objects.get(state=AlertState.OPEN, rule="fec_uncorrectable")
    assert alert.link_id == plant["links"]["l1"].pk

    report = svc.alerts_evaluate(now=start + timedelta(minutes=19))  # nothing written since
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED and report.resolved == 1


def test_a_link_whose_corrected_rate_climbs_for_ten_minutes_alerts_exactly_that_cable(plant):
    healthy(plant, T0 - timedelta(minutes=30), 30)
    svc.alerts_evaluate(now=T0)  # learns each receiver's baseline
    later = T0 + timedelta(minutes=12)
    for p in (*plant["gpu"][:2], plant["leaf"][0], *plant["leaf"][2:3], plant["spine"][0]):
        f.rollups(p, T0, 12)
    f.rollups(plant["leaf"][1], T0, 12, ber=2e-6)  # leaf receiver of link 1: 400x its baseline

    report = svc.alerts_evaluate(now=later)
    alert = Alert.objects.get()
    assert report.opened == [alert.pk]
    link = plant["links"]["l1"]
    assert (alert.rule, alert.severity, alert.state, alert.link_id) == (
        "fec_degradation",
        "notify",
        "open",
        link.pk,
    )
    assert [c.label for c in alert.cables.all()] == ["J-1"]
    assert alert.cable.label == "J-1"
    assert "gpu-a:eth1" in alert.summary and "leaf-a:Ethernet1/2" in alert.summary
    ev = alert.evidence
    gpu_xcvr = plant["gpu"][1].cage.transceiver
    leaf_xcvr = plant["leaf"][1].cage.transceiver
    assert {ev["modules"]["a"]["serial"], ev["modules"]["b"]["serial"]} == {gpu_xcvr.serial, leaf_xcvr.serial}
    leaf_side = "a" if link.a_port_id == plant["leaf"][1].pk else "b"
    assert set(ev["ends"]) == {leaf_side}  # only the leaf's receiver sees errors
    assert ev["ends"][leaf_side]["baseline"] == pytest.approx(5e-9, rel=0.01)
    assert ev["ends"][leaf_side]["series"]  # rates over time
    assert "gpu" not in alert.recommendation.lower() or "module" in alert.recommendation
    assert (
        ev["recommendation_code"] == "replace_module"
    )  # one direction: the GPU's transmitter or leaf's receiver
    assert Cable.objects.get(label="J-1").status == CableStatus.DEGRADED
    # Why degraded, in its history: the alert and its summary (without the rule's name twice:
    # the page words the code "alert #12 (FEC degradation)"), cut with an ellipsis when it is
    # longer than the history's 100 characters.
    why = Cable.objects.get(label="J-1").history.latest().history_change_reason
    assert alert.summary.startswith("FEC degradation: ") and "FEC degradation" not in why
    full = f"alert fec_degradation #{alert.pk}: {alert.summary.removeprefix('FEC degradation: ')}"
    assert (
        why == full
        if len(full) <= 100
        else (len(why) <= 100 and why.endswith("…") and full.startswith(why[:-1]))
    )
    assert Cable.objects.get(label="J-0").status == CableStatus.IN_PRODUCTION
    notice = AlertNotification.objects.get(alert=alert)
    assert set(notice.recipients) == {"hall-ops@example.com", "tech1@example.com"}

    # Re-running (a retry, or beat firing twice) updates, never duplicates.
    svc.alerts_evaluate(now=later)
    svc.alerts_evaluate(now=later + timedelta(seconds=30))
    assert Alert.objects.count() == 1
    assert AlertNotification.objects.count() == 1
    assert len(Alert.objects.get().evidence["history"]) == 2

    # The link recovers: healthy buckets for the clear window resolve the alert.
    f.rollups(plant["leaf"][1], later, 16)
    for p in (*plant["gpu"][:2], plant["leaf"][0], plant["spine"][0]):
        f.rollups(p, later, 16)
    svc.alerts_evaluate(now=later + timedelta(minutes=16))
    alert.refresh_from_db()
    assert alert.state == AlertState.RESOLVED and alert.resolved_at == later + timedelta(minutes=16)


def test_an_alert_on_a_path_through_panels_names_every_segment(plant):
    healthy(plant, T0 - timedelta(minutes=12), 12, skip=[plant["spine"][0]])
    up = plant["links"]["up"]
    f.rollups(plant["spine"][0], T0 - timedelta(minutes=12), 12, ber=5e-5)  # past 10% of the KP4 limit
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get()
    assert alert.link_id == up.pk
    assert [s["label"] for s in alert.evidence["segments"]] == ["J-U1", "T-1", "J-U2"]
    assert set(alert.cables.values_list("label", flat=True)) == {"J-U1", "T-1", "J-U2"}


def test_a_silenced_link_records_the_finding_quietly(plant):
    healthy(plant, T0 - timedelta(minutes=12), 12, skip=[plant["leaf"][1]])
    f.rollups(plant["leaf"][1], T0 - timedelta(minutes=12), 12, ber=1e-4)
    svc.maintenance_start(
        starts_at=T0 - timedelta(hours=1),
        ends_at=T0 + timedelta(hours=1),
        reason="re-seating optics",
        links=[plant["links"]["l1"]],
        now=T0,
    )
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get()
    assert alert.silenced
    assert not AlertNotification.objects.exists()
    assert Cable.objects.get(label="J-1").status == CableStatus.IN_PRODUCTION


def test_a_maintenance_window_on_a_rack_silences_its_devices(plant):
    from inventory.models import PortRollup

    healthy(plant, T0 - timedelta(minutes=12), 12)
    PortRollup.objects.filter(port=plant["leaf"][0], bucket=T0 - timedelta(minutes=2)).update(
        link_down_events=2
    )
    svc.maintenance_start(
        starts_at=T0 - timedelta(minutes=5),
        ends_at=T0 + timedelta(minutes=30),
        reason="swap",
        racks=[plant["rack"]],
    )
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get()
    assert (alert.rule, alert.severity, alert.silenced) == ("link_flap", "page", True)


def test_maintenance_needs_a_target_a_reason_and_a_sane_window(plant):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as exc:
        svc.maintenance_start(starts_at=T0, ends_at=T0 - timedelta(hours=1), reason=" ")
    assert set(exc.value.message_dict) == {"reason", "ends_at", "links"}
    assert not MaintenanceWindow.objects.exists()


def test_a_miswire_says_what_was_expected_and_what_was_seen(plant):
    healthy(plant, T0 - timedelta(minutes=5), 5)
    gpu0, leaf = plant["gpu"][0], plant["leaf"]
    f.seen(gpu0, T0 - timedelta(minutes=1), neighbor=leaf[1])  # cabled to Ethernet1/1, sees Ethernet1/2
    f.seen(leaf[0], T0 - timedelta(minutes=1), neighbor=gpu0)
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get()
    assert alert.key == f"miswire:port:{gpu0.pk}"
    end = next(iter(alert.evidence["ends"].values()))
    assert end["expected"] == "leaf-a:Ethernet1/1"
    assert end["seen"] == "leaf-a:Ethernet1/2"
    assert Cable.objects.get(label="J-0").status == CableStatus.IN_PRODUCTION  # not a cable fault


def test_an_unrecorded_module_swap_is_detected(plant):
    healthy(plant, T0 - timedelta(minutes=5), 5)
    leaf = plant["leaf"][0]
    recorded = leaf.cage.transceiver.serial
    f.seen(leaf, T0 - timedelta(minutes=1), serial=recorded)
    f.seen(plant["leaf"][1], T0 - timedelta(minutes=1), serial="INNO-NEW-0001")
    svc.alerts_evaluate(now=T0)
    alert = Alert.objects.get()
    assert alert.rule == "unrecorded_swap" and alert.port_id == plant["leaf"][1].pk
    assert "INNO-NEW-0001" in alert.summary


def test_concurrent_opening_of_the_same_condition_keeps_one_alert(plant):
    finding = Finding(
        key="fec_uncorrectable:link:1",
        rule="fec_uncorrectable",
        severity="notify",
        link_id=plant["links"]["l0"].pk,
        port_id=plant["gpu"][0].pk,
        headline="12 uncorrectable codewords",
        recommendation="clean",
        recommendation_code="clean",
        ends={"a": {"uncorrectable_cw": 12.0, "buckets_with_uncorrectable": 4}},
    )
    a1, opened1 = svc.alert_raise(finding=finding, now=T0)
    # A second run that had not seen the first one's row yet tries to insert again:
    Alert.objects.bulk_create([Alert(**{**_fields(a1), "id": None})], ignore_conflicts=True)
    a2, opened2 = svc.alert_raise(finding=finding, now=T0 + timedelta(minutes=1))
    assert (opened1, opened2) == (True, False)
    assert a1.pk == a2.pk
    assert Alert.objects.filter(key=finding.key).count() == 1


def _fields(alert):
    return {
        f.attname: getattr(alert, f.attname) for f in Alert._meta.concrete_fields if f.attname not in ("id",)
    }
