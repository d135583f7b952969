"""Safe to drain, and the drain itself.

``drain_verdict``: the one decision whether taking a link out of service is safe, read by the
alert page and ``GET /api/alerts/<id>/drain/`` alike. ``link_drain`` takes the alert's link out
of service (refused with the verdict's reasons when it is not safe, unless an engineer overrides
with a reason) and opens a maintenance window
on it, so the rules record what the link does meanwhile silently (an expected link-down or flap
pages nobody). ``link_restore`` puts it back and ends the window. Both are ``LinkDrain`` rows:
who, when, which link, the window's start and end.

A drain whose window runs out without a restore is overdue (``selectors.collectives.drain.
drains_overdue``): the cable's decision, the alert page and the API say so ("drained since 09:12,
window ended 13:12: restore it or extend"), and ``drains_overdue_notify`` (run by the periodic
alert-mail sweep) mails the engineers and whoever drained it, once per window end.
``link_drain_extend`` moves the window's end on.

A drain, an extension and a restore each write one entry in the journal of every cable of the
link's path ("Link ... drained until 19:13 UTC for alert #9 (link flap)", with the refused
reasons and the override when there was one; "... restored (drained since 15:13 UTC)"), so a
technician reading a cable's history sees when its link was out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from inventory.conf import app_settings
from inventory.core.choices import FieldNoteKind
from inventory.core.decision import drain_overdue_words, until_words
from inventory.core.links import alert_url
from inventory.core.mail import Addressee, mail_subject, why_line
from inventory.core.words import word
from inventory.models import Alert, AlertNotification, Link, LinkDrain, LinkSegment
from inventory.selectors.collectives.drain import DrainVerdict, drain_check, drains_open, drains_overdue
from inventory.services.alerts.evaluate import rule_config
from inventory.services.alerts.notify import notice_message_id
from inventory.services.alerts.silencing import maintenance_end, maintenance_start
from inventory.services.journal import journal_write


class DrainConflict(Exception):
    """The drain or restore cannot be made in the link's present state (HTTP 409): not safe
    (``verdict`` says why), already drained, or not drained."""

    def __init__(self, message: str, verdict: DrainVerdict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.verdict = verdict

    def as_dict(self) -> dict:
        return {"detail": self.message, **(self.verdict.as_dict() if self.verdict else {})}


def drain_verdict(*, link_id: int, now: datetime) -> DrainVerdict:
    """Safe to drain ``link_id`` now? The minimum uplink share is the rule profile's
    ``drain_min_uplink_share`` (``CABLETRACK_ALERT_RULES``), 75% by default."""
    return drain_check(
        link_id=link_id, now=now, min_uplink_share=rule_config().default.drain_min_uplink_share
    )


def _link_words(link: Link) -> str:
    return f"{link.a_port.device.name}:{link.a_port.name} \u2194 {link.b_port.device.name}:{link.b_port.name}"


def _journal_link(*, link: Link, alert: Alert, what: str, actor, now: datetime, more: str = "") -> None:
    """One entry in the journal of every cable of the link's path (of its A device without one),
    so the cables' history says when their link was out: "Link leaf-01:Ethernet1/1 ↔ gpu-0001:eth0
    drained until 19:13 UTC for alert #9 (link flap)", "... restored for alert #9"."""
    cable_ids = list(LinkSegment.objects.filter(link=link).order_by("seq").values_list("cable_id", flat=True))
    journal_write(
        cable_ids=cable_ids,
        device_ids=[] if cable_ids else [link.a_port.device_id],
        kind=FieldNoteKind.NOTE,
        text=f"Link {_link_words(link)} {what} for alert #{alert.pk} ({word(alert.rule, 'rule').lower()}){more}",
        actor=actor,
        now=now,
    )


def _link_of(alert: Alert) -> Link:
    return Link.objects.select_related("a_port__device", "b_port__device").get(pk=alert.link_id)


@transaction.atomic
def link_drain(
    *,
    alert: Alert,
    actor,
    now: datetime,
    ends_at: datetime | None = None,
    override_reason: str = "",
) -> LinkDrain:
    """Take the alert's link out of service until ``ends_at`` (default: ``CABLETRACK_DRAIN_HOURS``
    from now). ``DrainConflict`` (nothing written) when it is drained already, or when it is not
    safe and no ``override_reason`` is given; the caller checks that the user may override
    (``authz`` ``override_drain``) before passing one."""
    if alert.link_id is None:
        raise ValidationError({"link": "This alert names no link."})
    link = (
        Link.objects.select_for_update(of=("self",))
        .select_related("a_port__device", "b_port__device")
        .get(pk=alert.link_id)
    )
    current = drains_open(now=now, link_ids=[link.pk]).select_related("window").first()
    if current is not None:
        raise DrainConflict(
            f"This link is drained already, until {current.window.ends_at:%Y-%m-%d %H:%M} UTC."
        )
    ends_at = ends_at or now + timedelta(hours=float(app_settings.drain_hours))
    override_reason = (override_reason or "").strip()
    verdict = drain_verdict(link_id=link.pk, now=now)
    if not verdict.safe and not override_reason:
        raise DrainConflict("Not safe to take this link out of service now.", verdict)
    window = maintenance_start(
        starts_at=now,
        ends_at=ends_at,
        reason=(
            f"drained from alert #{alert.pk}"
            + (f" (override: {override_reason})" if not verdict.safe else "")
        )[:200],
        links=[link],
        actor=actor,
        now=now,
    )
    who = actor if getattr(actor, "is_authenticated", False) else None
    drain = LinkDrain.objects.create(
        alert=alert,
        link=link,
        window=window,
        drained_at=now,
        drained_by=who,
        safe=verdict.safe,
        reasons=verdict.reasons,
        override_reason="" if verdict.safe else override_reason[:200],
    )
    _journal_link(
        link=link,
        alert=alert,
        what=f"drained until {until_words(ends_at, now.date())} UTC",
        more=""
        if verdict.safe
        else f", although the safety check refused it: {'; '.join(verdict.reasons)}. Override: {override_reason}",
        actor=who,
        now=now,
    )
    return drain


def _latest_open_drain(alert: Alert, what_not: str) -> LinkDrain:
    """The latest drain of the alert's link not yet restored, its link row locked (restore and
    extend serialise with a drain of the same link); ``DrainConflict`` ending ``what_not`` when
    the link is not drained."""
    Link.objects.select_for_update().filter(pk=alert.link_id).first()
    drain = (
        LinkDrain.objects.select_related("window")
        .filter(link_id=alert.link_id, restored_at__isnull=True)
        .order_by("-drained_at", "-id")
        .first()
    )
    if drain is None:
        raise DrainConflict(f"This link is not drained: {what_not}")
    return drain


@transaction.atomic
def link_restore(*, alert: Alert, actor, now: datetime) -> LinkDrain:
    """Put the alert's link back in service: the latest drain not yet restored is recorded as
    restored and its maintenance window ends now (``DrainConflict`` when none is)."""
    if alert.link_id is None:
        raise ValidationError({"link": "This alert names no link."})
    drain = _latest_open_drain(alert, "nothing to restore.")
    maintenance_end(window=drain.window, now=now)
    drain.restored_at = now
    drain.restored_by = actor if getattr(actor, "is_authenticated", False) else None
    drain.save(update_fields=["restored_at", "restored_by"])
    _journal_link(
        link=_link_of(alert),
        alert=alert,
        what=f"restored (drained since {until_words(drain.drained_at, now.date())} UTC)",
        actor=drain.restored_by,
        now=now,
    )
    return drain


@transaction.atomic
def link_drain_extend(*, alert: Alert, actor, now: datetime, ends_at: datetime | None = None) -> LinkDrain:
    """Keep the alert's link out longer: the window of its latest drain not yet restored (in
    force, or overdue) ends at ``ends_at`` (default ``CABLETRACK_DRAIN_HOURS`` from now), recorded
    with who and when (``extended_at``, ``extended_by``). ``DrainConflict`` when none is."""
    if alert.link_id is None:
        raise ValidationError({"link": "This alert names no link."})
    ends_at = ends_at or now + timedelta(hours=float(app_settings.drain_hours))
    if ends_at <= now:
        raise ValidationError({"ends_at": "The new end of the drain must be in the future."})
    drain = _latest_open_drain(alert, "nothing to extend (drain it instead).")
    drain.window.ends_at = ends_at
    drain.window.save(update_fields=["ends_at"])
    drain.extended_at = now
    drain.extended_by = actor if getattr(actor, "is_authenticated", False) else None
    drain.save(update_fields=["extended_at", "extended_by"])
    _journal_link(
        link=_link_of(alert),
        alert=alert,
        what=f"kept drained until {until_words(ends_at, now.date())} UTC",
        actor=drain.extended_by,
        now=now,
    )
    return drain


ENGINEER_REASON = "are an engineer, who may restore this link, extend its drain or override"
DRAINER_REASON = "drained this link"


def _engineers_and(drainer) -> list[Addressee]:
    """Who hears of an overdue drain, and why: the engineers (who may restore, extend or
    override) and the person who drained the link."""
    users = get_user_model().objects.filter(is_active=True, groups__name__in=("engineer", "admin")).distinct()
    told = [Addressee(u.email.lower(), ENGINEER_REASON) for u in users if u.email]
    if drainer is not None and drainer.is_active and drainer.email:
        told.append(Addressee(drainer.email.lower(), DRAINER_REASON))
    return told


def overdue_notice_kind(drain: LinkDrain) -> str:
    """One notice per drain and window end (an extended drain that runs out again is told again)."""
    return f"drain-{drain.pk}-{drain.window.ends_at:%Y%m%d%H%M}"


def drains_overdue_notify(*, now: datetime) -> int:
    """Mail the engineers about every drain whose window ended without a restore: a notice row
    per (drain, window end), claimed by its unique key, so a second run, a concurrent one or a
    redelivered task adds none; ``alert_notifications_send`` sends them (with the alert's own
    notices, the same claim, retry and Message-ID). Returns the notices added."""
    overdue = list(
        drains_overdue(now=now).select_related(
            "window", "alert", "drained_by", "link__a_port__device", "link__b_port__device"
        )
    )
    if not overdue:
        return 0
    have = set(
        AlertNotification.objects.filter(
            alert_id__in={d.alert_id for d in overdue}, kind__startswith="drain-"
        ).values_list("alert_id", "kind")
    )
    rows = []
    for d in overdue:
        kind = overdue_notice_kind(d)
        if (d.alert_id, kind) in have:
            continue
        words = drain_overdue_words(d.drained_at, d.window.ends_at, now.date())
        link = _link_words(d.link)
        url = alert_url(d.alert_id, anchor="drain")
        told = _engineers_and(d.drained_by)
        rows.append(
            AlertNotification(
                alert_id=d.alert_id,
                kind=kind,
                recipients=list(dict.fromkeys(t.address for t in told)),
                why=why_line(told),
                message_id=notice_message_id(d.alert, kind),
                created_at=now,
                subject=mail_subject(f"[cabletrack] Drain overdue: {link}"),
                body="\n".join(
                    [
                        f"Link {link} (alert #{d.alert_id}, {word(d.alert.rule, 'rule').lower()}): {words}.",
                        f"Drained by {d.drained_by or 'someone'}; the rules watch the link again since the "
                        "window ended, but nobody recorded it back in service.",
                        "",
                        f"Restore it or extend the drain: {url}",
                    ]
                ),
            )
        )
    created = AlertNotification.objects.bulk_create(rows, ignore_conflicts=True)
    return len(created)


def drain_panel(*, alert: Alert, now: datetime) -> dict:
    """What the alert page shows about draining its link: the verdict, the drain in force (if
    any), the drain that ran out of its window without a restore (``overdue``, with its words)
    and the drains recorded from this alert, newest first."""
    if alert.link_id is None:
        return {"drain": None, "drained": None, "overdue": None, "overdue_words": "", "drains": []}
    overdue = (
        drains_overdue(now=now, link_ids=[alert.link_id])
        .select_related("window", "drained_by", "alert")
        .first()
    )
    return {
        "overdue": overdue,
        "overdue_words": drain_overdue_words(overdue.drained_at, overdue.window.ends_at, now.date())
        if overdue
        else "",
        "drain": drain_verdict(link_id=alert.link_id, now=now),
        "drained": drains_open(now=now, link_ids=[alert.link_id])
        .select_related("window", "drained_by", "alert")
        .order_by("-drained_at")
        .first(),
        "drains": list(
            alert.drains.select_related("window", "drained_by", "restored_by").order_by("-drained_at", "-id")[
                :10
            ]
        ),
    }
