"""Retest reminders walked through time, asserted on what a real SMTP server (aiosmtpd) received.

rack R-RT (team "Row A techs": mailbox row-a@, members alice and bob, lead lena)
  [gpu-rt eth0]--J-RT--[leaf-rt Ethernet1/1]
"""

from datetime import UTC, datetime, timedelta

import pytest

from inventory.core.choices import DigestStatus, ReminderKind, ReminderMode
from inventory.models import Cable, ReminderDigest, RetestReminder
from inventory.services.retests import reminders
from tests import factories as f

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a Monday
BASE = "https://cabletrack.example.com"


@pytest.fixture
def plant(settings):
    settings.CABLETRACK_BASE_URL = BASE
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    alice = f.person("alice")
    bob = f.person("bob")
    lena = f.person("lena")
    crew = f.team("Row A techs", email="row-a@example.net", lead=lena, members=[alice, bob])
    rack = f.RackFactory(name="R-RT")
    rack.team = crew
    rack.save()
    _, gpu = f.twin_port_device(
        "gpu-rt", rack=rack, u=3, role="gpu_node", names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-rt", rack=rack, u=40)
    cable = f.jumper("J-RT", gpu[0], leaf[0], install_date=T0.date())
    return {"cable": cable, "rack": rack, "team": crew}


def sweep(now):
    """What the daily task does, in process: sweep, then send every digest that is ready."""
    result = reminders.retests_sweep(now=now)
    for pk in result.digests_ready:
        reminders.reminder_digest_send(digest_id=pk, now=now)
    return result


TEAM = ["alice@example.net", "bob@example.net", "row-a@example.net"]


def test_a_cable_walks_from_install_to_escalation_and_back(plant, smtp_sink):
    cable = plant["cable"]
    f.record_test(cable, at=T0 + timedelta(hours=1))

    sweep(T0 + timedelta(days=1))
    cable.refresh_from_db()
    assert cable.retest_due == (T0 + timedelta(days=90)).date()
    assert smtp_sink.messages() == []

    # Day 83: one due-soon digest to the team mailbox and each member, nothing to the lead yet.
    sweep(T0 + timedelta(days=83))
    got = smtp_sink.messages()
    assert sorted(m.to for m in got) == TEAM
    for m in got:
        assert m.subject == "[cabletrack] Retests: 0 overdue, 1 due soon"
        assert m.links == [f"{BASE}/c/J-RT"]
        assert f"{BASE}/c/J-RT" in m.text
        assert "R-RT" in m.text and "OLTS/OTDR" in m.text
        assert m.message_id.startswith("<retest-digest-")
        # Why the reader gets it, as the digest's last line (text and HTML).
        why = "You get this mail because you are on team Row A techs, which looks after rack R-RT."
        assert m.text.replace("\r\n", "\n").rstrip().endswith(why)
        assert why in m.html
        assert "escalated" not in m.text
        assert m.message["Auto-Submitted"] == "auto-generated"

    # The same day again (on demand, a re-run): nothing new goes out.
    sweep(T0 + timedelta(days=83, hours=5))
    assert len(smtp_sink.messages()) == 3

    # Day 91: overdue, once, to the same three.
    smtp_sink.clear()
    sweep(T0 + timedelta(days=91))
    got = smtp_sink.messages()
    assert sorted(m.to for m in got) == TEAM
    assert {m.subject for m in got} == {"[cabletrack] Retests: 1 overdue, 0 due soon"}
    assert all("1 day overdue" in m.text for m in got)

    # Day 100: more than 7 days overdue: the lead hears of it, nobody else is mailed again.
    smtp_sink.clear()
    sweep(T0 + timedelta(days=100))
    got = smtp_sink.messages()
    assert [m.to for m in got] == ["lena@example.net"]
    assert got[0].subject == (
        "[cabletrack] Retests: 1 overdue, 0 due soon (1 escalated: overdue more than 7 days)"
    )
    assert "10 days overdue, ESCALATED" in got[0].text
    assert got[0].links == [f"{BASE}/c/J-RT"]
    # The lead reads that it is escalated to them as team lead, and what is expected of them.
    lead_text = got[0].text.replace("\r\n", "\n")
    assert "Escalated to you as team lead of Row A techs: 1 retest overdue more than 7 days" in lead_text
    assert "What is expected of you: see that each is retested soon" in lead_text
    assert lead_text.rstrip().endswith(
        "You get this mail because you lead team Row A techs, and its retests overdue too long are "
        "escalated to you."
    )
    assert "Escalated to you as team lead of Row A techs</strong>: 1 retest overdue" in got[0].html

    # Retest on day 101: cleared. Later sweeps stay quiet until the next due-soon.
    smtp_sink.clear()
    f.record_test(cable, at=T0 + timedelta(days=101))
    sweep(T0 + timedelta(days=101, hours=1))
    sweep(T0 + timedelta(days=150))
    assert smtp_sink.messages() == []
    cable.refresh_from_db()
    assert cable.retest_due == (T0 + timedelta(days=191)).date()
    # The due-date changes are in the cable's history, with their reason.
    reasons = list(cable.history.values_list("history_change_reason", "retest_due"))
    assert ("retest due recomputed", (T0 + timedelta(days=191)).date()) in reasons
    assert ("retest due recomputed", (T0 + timedelta(days=90)).date()) in reasons


def test_a_digest_groups_many_cables_by_rack_in_one_mail(plant, smtp_sink):
    rack2 = f.RackFactory(name="R-RT2")
    rack2.team = plant["team"]
    rack2.position = 1
    rack2.save()
    _, a = f.twin_port_device("gpu-rt2", rack=rack2, u=5, role="gpu_node")
    _, b = f.twin_port_device("leaf-rt2", rack=rack2, u=41)
    c2 = f.jumper("J-RT2", a[0], b[0], install_date=T0.date())
    c3 = f.jumper("J-RT3", a[1], b[1], install_date=T0.date())
    f.record_test(plant["cable"], at=T0)
    f.record_test(c2, at=T0 - timedelta(days=10))
    f.record_test(c3, at=T0 + timedelta(days=1))

    sweep(T0 + timedelta(days=84))

    got = smtp_sink.to("alice@example.net")
    assert len(got) == 1
    assert got[0].subject == "[cabletrack] Retests: 1 overdue, 2 due soon"
    text = got[0].text.replace("\r\n", "\n")
    # Grouped by rack, in walking order (rack position, then U).
    assert text.index("rack R-RT2") < text.index("J-RT2") < text.index("DUE SOON")
    assert text.index("DUE SOON") < text.index("rack R-RT\n") < text.index("J-RT\n") < text.index("J-RT3")
    assert sorted(got[0].links) == sorted(f"{BASE}/c/{x}" for x in ("J-RT", "J-RT2", "J-RT3"))
    assert "<html>" in got[0].html.lower() or "<h2" in got[0].html


def test_a_retest_before_the_digest_time_clears_the_pending_reminder(plant, smtp_sink):
    alice = f.person("alice")
    reminders.user_profile_update(
        user=alice, reminder_mode=ReminderMode.DAILY, digest_weekday=0, digest_hour=7
    )
    f.record_test(plant["cable"], at=T0)
    day83 = (T0 + timedelta(days=83)).replace(hour=5)
    sweep(day83)
    assert "alice@example.net" not in [m.to for m in smtp_sink.messages()]  # waits for 07:00
    digest = ReminderDigest.objects.get(recipient="alice@example.net")
    assert digest.send_after == day83.replace(hour=7)
    f.record_test(plant["cable"], at=day83 + timedelta(minutes=30))
    reminders.retests_sweep(now=day83 + timedelta(hours=1))
    for pk in reminders.reminders_dispatch(now=day83.replace(hour=7)).digests:
        reminders.reminder_digest_send(digest_id=pk, now=day83.replace(hour=7))
    assert smtp_sink.to("alice@example.net") == []
    digest.refresh_from_db()
    assert digest.status == DigestStatus.CLEARED


def test_transient_smtp_errors_retry_with_backoff_and_send_once(plant, smtp_sink):
    f.record_test(plant["cable"], at=T0)
    refusals = {"n": 0}

    def flaky(envelope):
        if "alice@example.net" in envelope.rcpt_tos and refusals["n"] < 2:
            refusals["n"] += 1
            return "451 4.3.0 try again later"
        return None

    smtp_sink.on_data = flaky
    now = T0 + timedelta(days=83)
    result = reminders.retests_sweep(now=now)
    alice = ReminderDigest.objects.get(recipient="alice@example.net")
    for pk in result.digests_ready:
        if pk != alice.pk:
            assert reminders.reminder_digest_send(digest_id=pk, now=now) == "sent"
    with pytest.raises(reminders.TransientSendError) as first:
        reminders.reminder_digest_send(digest_id=alice.pk, now=now)
    assert first.value.retry_in == 60
    alice.refresh_from_db()
    assert alice.status == DigestStatus.RETRY
    assert "451" in alice.last_error
    # Too early: nothing happens. Then the backoff doubles.
    assert reminders.reminder_digest_send(digest_id=alice.pk, now=now + timedelta(seconds=30)) == "not mine"
    with pytest.raises(reminders.TransientSendError) as second:
        reminders.reminder_digest_send(digest_id=alice.pk, now=now + timedelta(seconds=61))
    assert second.value.retry_in == 120
    later = now + timedelta(seconds=61 + 121)
    assert reminders.reminders_dispatch(now=later).digests == [alice.pk]
    assert reminders.reminder_digest_send(digest_id=alice.pk, now=later) == "sent"
    assert reminders.reminder_digest_send(digest_id=alice.pk, now=later) == "not mine"
    got = smtp_sink.to("alice@example.net")
    assert len(got) == 1
    alice.refresh_from_db()
    assert alice.attempts == 3
    assert got[0].message_id == alice.message_id


def test_a_permanent_smtp_error_is_recorded_and_not_retried(plant, smtp_sink):
    f.record_test(plant["cable"], at=T0)
    smtp_sink.on_data = lambda env: "550 5.1.1 no such mailbox" if "bob@example.net" in env.rcpt_tos else None
    now = T0 + timedelta(days=83)
    sweep(now)
    bob = ReminderDigest.objects.get(recipient="bob@example.net")
    assert bob.status == DigestStatus.FAILED
    assert "550" in bob.last_error
    assert reminders.reminders_dispatch(now=now + timedelta(days=1)).digests == []
    assert smtp_sink.to("bob@example.net") == []
    assert len(smtp_sink.messages()) == 2
    # An admin can put it back in line once the address is fixed; same Message-ID.
    smtp_sink.on_data = None
    assert reminders.digest_resend(digest_id=bob.pk, now=now + timedelta(hours=1))
    assert reminders.reminder_digest_send(digest_id=bob.pk, now=now + timedelta(hours=1)) == "sent"
    assert smtp_sink.to("bob@example.net")[0].message_id == bob.message_id


def test_the_smtp_window_resends_with_the_same_message_id(plant, smtp_sink, monkeypatch):
    """Accepted by the server, then the sender dies before recording: sent again, same Message-ID."""
    f.record_test(plant["cable"], at=T0)
    now = T0 + timedelta(days=83)
    result = reminders.retests_sweep(now=now)
    alice = ReminderDigest.objects.get(recipient="alice@example.net")

    real_update = reminders.ReminderDigest.objects.filter

    class Died(BaseException):
        pass

    def die_when_recording_sent(*args, **kw):
        qs = real_update(*args, **kw)
        original = qs.update

        def update(**fields):
            if fields.get("status") == DigestStatus.SENT:
                raise Died
            return original(**fields)

        qs.update = update
        return qs

    monkeypatch.setattr(reminders.ReminderDigest.objects, "filter", die_when_recording_sent)
    with pytest.raises(Died):
        reminders.reminder_digest_send(digest_id=alice.pk, now=now)
    monkeypatch.undo()
    assert len(smtp_sink.to("alice@example.net")) == 1  # the server has it
    alice.refresh_from_db()
    assert alice.status == DigestStatus.SENDING

    # Within the lease nobody touches it; after it, the dispatcher sends it again.
    assert alice.pk not in reminders.reminders_dispatch(now=now + timedelta(seconds=60)).digests
    later = now + timedelta(minutes=6)
    assert alice.pk in reminders.reminders_dispatch(now=later).digests
    assert reminders.reminder_digest_send(digest_id=alice.pk, now=later) == "sent"
    copies = smtp_sink.to("alice@example.net")
    assert len(copies) == 2
    assert copies[0].message_id == copies[1].message_id == alice.message_id
    # The others were never affected.
    for pk in result.digests_ready:
        if pk != alice.pk:
            reminders.reminder_digest_send(digest_id=pk, now=later)
    assert len(smtp_sink.to("bob@example.net")) == 1


def test_reminders_without_an_owner_go_nowhere_and_fall_back_to_row_then_site(plant, smtp_sink):
    rack = plant["rack"]
    rack.team = None
    rack.save()
    f.record_test(plant["cable"], at=T0)
    sweep(T0 + timedelta(days=83))
    assert smtp_sink.messages() == []
    site_team = f.team("Site crew", email="site@example.net")
    site = rack.row.room.site
    site.team = site_team
    site.save()
    sweep(T0 + timedelta(days=84))
    assert [m.to for m in smtp_sink.messages()] == ["site@example.net"]
    row = rack.row
    row.team = f.team("Row crew", email="row@example.net")
    row.save()
    sweep(T0 + timedelta(days=85))
    assert [m.to for m in smtp_sink.messages()][-1] == "row@example.net"
    assert RetestReminder.objects.filter(kind=ReminderKind.DUE_SOON).count() == 2
    assert Cable.objects.get(label="J-RT").retest_reminders.count() == 2


def test_a_digest_line_says_the_cables_decision_not_only_its_due_date(plant, smtp_sink):
    """A cable overdue for its retest with a fault report open: the mail says what its page and
    the worklist row say ("fault open" and the next step), not only that a retest is due."""
    from inventory.core.choices import FieldNoteKind
    from inventory.models import FieldNote
    from inventory.selectors.decision import cable_decisions

    cable = plant["cable"]
    f.record_test(cable, at=T0)
    when = T0 + timedelta(days=92)
    FieldNote.objects.create(cable=cable, kind=FieldNoteKind.FAULT, text="no light at B", at=when)

    sweep(when)

    decision = cable_decisions(cables=[Cable.objects.get(pk=cable.pk)], now=when)[cable.pk]
    assert decision.state == "fault" and decision.step is not None
    got = smtp_sink.to("alice@example.net")
    assert len(got) == 1
    assert decision.line in got[0].text.replace("\r\n", "\n")
    assert "fault open" in decision.line and decision.step.label in decision.line
    assert decision.line.replace("·", "&middot;") in got[0].html or decision.line in got[0].html


def test_out_of_band_copper_is_never_reminded_nor_escalated(plant, smtp_sink):
    """[bmc-rt mgmt]--M-RT (Cat6A)--[oob-rt Gi1] beside J-RT in rack R-RT: no test gate applies to
    Cat6A and no test can be recorded on it, so a retest date would be overdue for ever. The team
    hears of J-RT only, and the lead's escalation names J-RT only."""
    from inventory.core.choices import ConnectorType, DeviceRole
    from inventory.models import Device
    from inventory.services.plant import cables as cable_services

    rack = plant["rack"]
    bmc = Device.objects.create(name="bmc-rt", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=20)
    oob = Device.objects.create(name="oob-rt", role=DeviceRole.MGMT_SWITCH, rack=rack, position_u=42)
    copper, _ = cable_services.cable_install(
        label="M-RT",
        kind="CAT6A",
        a=cable_services.EndSpec(port=f.port(bmc, "mgmt", connector_type=ConnectorType.RJ45)),
        b=[cable_services.EndSpec(port=f.port(oob, "Gi1", connector_type=ConnectorType.RJ45))],
        install_date=T0.date(),
    )
    f.record_test(plant["cable"], at=T0)

    for day in (1, 83, 91, 100):
        sweep(T0 + timedelta(days=day))

    got = smtp_sink.messages()
    for m in got:
        assert "J-RT" in m.text and "M-RT" not in m.text and "M-RT" not in m.html
    assert sorted(m.to for m in got) == sorted([*TEAM, *TEAM, "lena@example.net"])
    assert [m.subject for m in smtp_sink.to("lena@example.net")] == [
        "[cabletrack] Retests: 1 overdue, 0 due soon (1 escalated: overdue more than 7 days)"
    ]
    copper.refresh_from_db()
    assert copper.retest_due is None  # nor is it on the worklist, the overdue counts, the CSV
