"""Reads for "impact, both ways" (issue 35): the degraded intervals of a cable or module and the
jobs whose ranks cross those links, and per site and month the stalls and the problems caught
early. Set-based: a fixed number of queries whatever the number of jobs, ranks, alerts or
records; the figures are ``core.impact``'s.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db.models import Count, Min, Q, Subquery
from django.utils import timezone

from inventory.conf import app_settings
from inventory.core import impact as core
from inventory.core.choices import AlertRule
from inventory.db.compiled import CompiledRead
from inventory.models import Alert, Cable, JobRank, LinkSegment, Site, Transceiver, TransceiverPlacement

# A month as the report takes it (``core.impact.month_bounds`` decides; this is its shape, for the schema).
MONTH_RE = r"^(20[0-9]{2}|2100)-(0[1-9]|1[0-2])$"
# The cable and module pages show the impact of the last this many days (the API takes ``days``).
IMPACT_DAYS = 90
_DEVICE_SITE = "rack__row__room__site_id"
_SITE = f"device__{_DEVICE_SITE}"


def stall_params() -> core.StallParams:
    """The forecast's stall estimate, from its one home (the ``CABLETRACK_*`` settings)."""
    return core.StallParams(
        hours_per_incident=app_settings.failure_hours_per_incident,
        run_hours=app_settings.run_hours,
        gpu_hour_cost=app_settings.gpu_hour_cost,
        cluster_gpus=app_settings.cluster_gpus,
    )


def _overlapping(qs, *, start: datetime, end: datetime, opened="opened_at", resolved="resolved_at"):
    return qs.filter(**{f"{opened}__lt": end}).filter(
        Q(**{f"{resolved}__isnull": True}) | Q(**{f"{resolved}__gt": start})
    )


def _degraded_alerts(where: Q, *, start: datetime, end: datetime):
    return _overlapping(
        Alert.objects.filter(
            where,
            rule__in=core.DEGRADED_RULES,
            severity__in=core.DEGRADED_SEVERITIES,
            link__isnull=False,
        ),
        start=start,
        end=end,
    ).order_by()


def _jobs_on(port_link: dict[int, int], *, start: datetime, end: datetime) -> list[core.JobRun]:
    """The jobs that ran in the window with a rank on one of the ports (one query)."""
    if not port_link:
        return []
    rows = _overlapping(
        JobRank.objects.filter(port_id__in=list(port_link)),
        start=start,
        end=end,
        opened="job__started_at",
        resolved="job__ended_at",
    ).values_list(
        "job_id",
        "job__job_id",
        "job__name",
        "job__started_at",
        "job__ended_at",
        "job__world_size",
        "rank",
        "host__name",
        "gpu",
        "port_id",
    )
    jobs: dict[int, tuple] = {}
    ranks: dict[int, list[core.RankOnLink]] = {}
    for pk, job_id, name, started, ended, gpus, rank, host, gpu, port in rows:
        jobs[pk] = (job_id, name, started, ended, gpus)
        ranks.setdefault(pk, []).append(core.RankOnLink(rank, host, gpu, port_link[port]))
    return [
        core.JobRun(job_id=j, name=n, started_at=s, ended_at=e, gpus=g, ranks=tuple(ranks[pk]))
        for pk, (j, n, s, e, g) in sorted(jobs.items())
    ]


def _cable_degraded_query(cable_id: int, start: datetime, end: datetime):
    where = (
        Q(cable_id=cable_id)
        | Q(moved_from_id=cable_id)
        | Q(pk__in=Alert.cables.through.objects.filter(cable_id=cable_id).values("alert_id"))
        | Q(link_id__in=LinkSegment.objects.filter(cable_id=cable_id).values("link_id"))
    )
    # The alerts that hold the cable (``core.decision.alert_holds``): on a cable carrying several
    # active links (a trunk), only those naming it or no cable; one flapping patch cord on one of
    # its links is not the trunk's degraded time.
    links = (
        LinkSegment.objects.filter(cable_id=cable_id, link__active=True)
        .order_by()
        .values("cable_id")
        .annotate(n=Count("link_id", distinct=True))
        .values("n")
    )
    holds = (
        Q(carried__isnull=True)
        | Q(carried__lt=2)
        | Q(cable_id__isnull=True)
        | Q(cable_id=cable_id)
        | Q(moved_from_id=cable_id)
    )
    predecessors = Cable.objects.filter(replaced_by_id=cable_id)
    return (
        _degraded_alerts(where, start=start, end=end)
        .annotate(carried=Subquery(links))
        .filter(holds)
        .annotate(since=Subquery(predecessors.order_by("-retired_at").values("retired_at")[:1]))
        .values_list("link_id", "link__a_port_id", "link__b_port_id", "opened_at", "resolved_at", "since")
    )


# The cable page's Impact card reads it on every page: compiled once per process.
_CABLE_DEGRADED = CompiledRead(_cable_degraded_query)


def cable_impact(*, cable: Cable, start: datetime, end: datetime, now: datetime) -> core.Impact:
    """What ran over ``cable`` while it was degraded between ``start`` and ``end``: two queries
    (one when it was never degraded). Degraded: an alert of ``core.DEGRADED_RULES`` at warning or
    worse on a link through it (the link's segments, the alert's recorded path or suspect, or an
    alert moved off it by its replacement, which counts until the cable was retired); on a cable
    carrying several links, only one that names it or no cable (``core.decision.alert_holds``). An alert moved
    onto it by a replacement counts from the replacement (its predecessor's retirement, read as a
    column of the same query): the jobs that crossed the old cable are the old cable's impact."""
    rows = _CABLE_DEGRADED(cable.pk, start, end)
    stop = cable.retired_at
    degraded = []
    port_link: dict[int, int] = {}
    for lid, a, b, opened, resolved, since in rows:
        if since is not None:
            if resolved is not None and resolved <= since:
                continue
            opened = max(opened, since)
        if stop is not None:
            if opened >= stop:
                continue
            resolved = min(resolved or stop, stop)
        degraded.append(core.Degraded(lid, opened, resolved))
        port_link[a] = port_link[b] = lid
    jobs = _jobs_on(port_link, start=start, end=end)
    return core.impact_of(degraded=degraded, jobs=jobs, start=start, end=end, now=now, stall=stall_params())


def module_impact(*, transceiver: Transceiver, start: datetime, end: datetime, now: datetime) -> core.Impact:
    """What ran over ``transceiver`` while it was degraded: the alerts on links through the cages
    it sat in, each counted only while it sat there. Three queries (one when never placed)."""
    placed: dict[int, list[tuple[datetime, datetime | None]]] = {}
    for cage, installed, removed in TransceiverPlacement.objects.filter(transceiver=transceiver).values_list(
        "cage_id", "installed_at", "removed_at"
    ):
        placed.setdefault(cage, []).append((installed, removed))
    if not placed:
        return core.Impact()
    cages = list(placed)
    rows = _degraded_alerts(
        Q(link__a_port__cage_id__in=cages) | Q(link__b_port__cage_id__in=cages), start=start, end=end
    ).values_list(
        "link_id",
        "link__a_port_id",
        "link__b_port_id",
        "link__a_port__cage_id",
        "link__b_port__cage_id",
        "opened_at",
        "resolved_at",
    )
    degraded = []
    port_link: dict[int, int] = {}
    for lid, a, b, a_cage, b_cage, opened, resolved in rows:
        for cage in {a_cage, b_cage} & set(placed):
            for installed, removed in placed[cage]:
                s = max(opened, installed)
                e = min(x for x in (resolved, removed, now) if x is not None)
                if e > s:
                    degraded.append(core.Degraded(lid, s, e))
                    port_link[a] = port_link[b] = lid
    jobs = _jobs_on(port_link, start=start, end=end)
    return core.impact_of(degraded=degraded, jobs=jobs, start=start, end=end, now=now, stall=stall_params())


def impact_window(*, now: datetime, days: int = IMPACT_DAYS) -> tuple[datetime, datetime]:
    return now - timedelta(days=days), now


def recent() -> dict:
    """The pages' window: the last ``IMPACT_DAYS`` days up to now (keyword arguments)."""
    start, end = impact_window(now=timezone.now())
    return {"start": start, "end": end, "now": end}


def page_impact(impact: core.Impact, what: str) -> dict | None:
    """The Impact card of a cable or module page (None: not degraded in the window)."""
    if impact.degraded_hours <= 0:
        return None
    return {"what": what, "days": IMPACT_DAYS, "currency": app_settings.currency, **impact.as_dict()}


# --- the monthly report --------------------------------------------------------------------------


def _at_site(site_id: int, prefix: str = "link__") -> Q:
    return Q(**{f"{prefix}a_port__{_SITE}": site_id}) | Q(**{f"{prefix}b_port__{_SITE}": site_id})


def impact_month(*, site_id: int, start: datetime, end: datetime, now: datetime) -> core.MonthReport:
    """The site's month: stalls incurred (tail-latency spikes of the site's jobs, and
    uncorrectable-codeword alerts on links a running job crossed, opened in the month) against the
    problems caught early (early warnings ended, by resolution or a recorded repair, in the month,
    with no uncorrectable alert on their link meanwhile). Six queries whatever the month holds."""
    end = min(end, now)
    # 1. spikes opened in the month, 2. their jobs' size and site
    # (a JSON value: SQLite reads a job id of digits back as a number)
    spikes = [
        (pk, at, link, str(job) if job is not None else None)
        for pk, at, link, job in Alert.objects.filter(
            rule=AlertRule.TAIL_LATENCY_SPIKE, opened_at__gte=start, opened_at__lt=end
        )
        .order_by()
        .values_list("pk", "opened_at", "link_id", "evidence__collective__job")
    ]
    job_ids = {j for *_x, j in spikes if j}
    job_rows = (
        JobRank.objects.filter(job__job_id__in=job_ids, **{f"host__{_DEVICE_SITE}": site_id})
        .order_by()
        .values_list("job__job_id", "job__world_size")
        .distinct()
        if job_ids
        else []
    )
    sized = dict(job_rows)
    spike_stalls = [
        core.Stall(AlertRule.TAIL_LATENCY_SPIKE.value, pk, job, sized[job], at, link)
        for pk, at, link, job in spikes
        if job in sized
    ]
    # 3. uncorrectable alerts opened in the month at the site, 4. the jobs running over their links
    uncorr = list(
        Alert.objects.filter(
            _at_site(site_id), rule=AlertRule.FEC_UNCORRECTABLE, opened_at__gte=start, opened_at__lt=end
        )
        .order_by()
        .values_list("pk", "link_id", "link__a_port_id", "link__b_port_id", "opened_at", "resolved_at")
    )
    port_alerts: dict[int, list[tuple]] = {}
    for row in uncorr:
        for port in row[2:4]:
            port_alerts.setdefault(port, []).append(row)
    uncorr_stalls = []
    if port_alerts:
        for port, job_id, gpus, started, ended in (
            JobRank.objects.filter(port_id__in=list(port_alerts), job__started_at__lt=end)
            .order_by()
            .values_list("port_id", "job__job_id", "job__world_size", "job__started_at", "job__ended_at")
        ):
            for pk, link, _a, _b, opened, resolved in port_alerts[port]:
                if started < (resolved or now) and (ended is None or ended > opened):
                    uncorr_stalls.append(
                        core.Stall(AlertRule.FEC_UNCORRECTABLE.value, pk, job_id, gpus, opened, link)
                    )
    stalls = core.stalls_deduplicated(spike_stalls, uncorr_stalls)
    # 5. early warnings at the site that ended in the month (resolved, or first repaired)
    warnings = []
    for pk, link, rule, opened, resolved, repaired in (
        Alert.objects.filter(
            _at_site(site_id),
            rule__in=core.EARLY_WARNING_RULES,
            severity__in=core.DEGRADED_SEVERITIES,
            link__isnull=False,
            opened_at__lt=end,
        )
        .annotate(repaired=Min("repairs__done_at"))
        .filter(Q(resolved_at__gte=start, resolved_at__lt=end) | Q(repaired__gte=start, repaired__lt=end))
        .order_by()
        .values_list("pk", "link_id", "rule", "opened_at", "resolved_at", "repaired")
    ):
        ended = min(x for x in (resolved, repaired) if x is not None)
        if start <= ended < end:
            warnings.append(core.EarlyWarning(pk, link, rule, opened, ended))
    # 6. every uncorrectable alert on those links, whenever it was open
    seen: dict[int, list[tuple[datetime, datetime | None]]] = {}
    if warnings:
        for link, opened, resolved in (
            Alert.objects.filter(rule=AlertRule.FEC_UNCORRECTABLE, link_id__in={w.link_id for w in warnings})
            .order_by()
            .values_list("link_id", "opened_at", "resolved_at")
        ):
            seen.setdefault(link, []).append((opened, resolved))
    caught = core.caught_early(warnings=warnings, uncorrectable=seen)
    return core.month_report(stalls=stalls, caught=caught, stall=stall_params())


def report_params(params) -> tuple[Site | None, str, tuple | None, dict]:
    """The report's site (name or slug) and month (``YYYY-MM``, default this month), or errors."""
    errors: dict[str, list[str]] = {}
    now = timezone.localtime()
    month = params.get("month") or f"{now:%Y-%m}"
    bounds = None
    try:
        bounds = core.month_bounds(month, tz=now.tzinfo)
    except ValueError as exc:
        errors["month"] = [str(exc)]
    name = params.get("site") or ""
    site = Site.objects.filter(Q(name=name) | Q(slug=name)).first() if name else None
    if site is None:
        errors["site"] = [f"No site named {name!r}." if name else "Choose a site (its name or slug)."]
    return site, month, bounds, errors


ASSUMPTIONS = (
    "A stall incurred is a tail-latency spike of a job at the site, or an uncorrectable-codewords "
    "alert on a link while a job ran over it; one job slowed by one fault is one "
    "stall, however many alerts showed it. Each is costed at one stall of that job: "
    "{hours:g} h x its GPUs x {cost:g} {currency} per GPU-hour.",
    "A problem caught early is an FEC degradation, FEC histogram tail or receive-power drift "
    "alert (warning or worse) that was resolved or repaired in the month with no uncorrectable "
    "codewords alert on its link meanwhile; overlapping warnings on one link are one problem.",
    "The saving is each problem caught at one stall of a {gpus:,}-GPU training run "
    "({hours:g} h x {gpus:,} GPUs x {cost:g} {currency} per GPU-hour): what the uncorrectable "
    "errors it would have become would have cost (the failure forecast's estimate and settings).",
)


def impact_report(*, site, month: str, start: datetime, end: datetime, now: datetime) -> dict:
    """The monthly report as the page and ``GET /api/reports/impact/`` both show it."""
    report = impact_month(site_id=site.pk, start=start, end=end, now=now)
    p = stall_params()
    words = {
        "hours": p.hours_per_incident,
        "cost": p.gpu_hour_cost,
        "gpus": p.cluster_gpus,
        "currency": app_settings.currency,
    }
    return {
        "site": site.name,
        "month": month,
        "currency": app_settings.currency,
        **report.as_dict(),
        "assumptions": [a.format(**words) for a in ASSUMPTIONS],
    }
