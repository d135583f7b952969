"""Safe to drain: what taking one link out of service would do, against what is already down.

* A leaf uplink (link class ``leaf-spine``): the leaf's uplinks still in service afterwards against
  its minimum (a share of all its uplinks; CorrOpt keeps every top-of-rack switch above one).
  Already down: an uplink whose cable is faulty or retired, or with an open flap/degraded alert.
* A GPU node's rail link: the GPU(s) behind that NIC (the server model's GPU-to-NIC map) lose
  their rail; refused while a running job has a rank on such a GPU (the job would stall).
* A link drained already (``LinkDrain`` whose maintenance window is open) counts as down for
  its leaf; draining it again is refused by ``link_drain`` itself. So does a link whose drain
  ran out of its window without a restore (``drains_overdue``): nobody put it back.

A fixed handful of queries, whatever the site's size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from inventory.core.choices import AlertRule, AlertState, CableStatus, DeviceRole
from inventory.models import Alert, GpuNicMap, JobRank, Link, LinkDrain, LinkSegment

UPLINK_CLASS = "leaf-spine"
DOWN_CABLE = (CableStatus.FAULTY, CableStatus.RETIRED)
DOWN_RULES = (AlertRule.LINK_FLAP, AlertRule.LINK_DEGRADED)


@dataclass
class DrainVerdict:
    link_id: int
    safe: bool
    reasons: list[str] = field(default_factory=list)  # why not (what to repair or wait for first)
    notes: list[str] = field(default_factory=list)  # what it does, when safe
    leaves: list[dict] = field(default_factory=list)
    gpus: list[dict] = field(default_factory=list)
    jobs: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "link": self.link_id,
            "safe": self.safe,
            "reasons": self.reasons,
            "notes": self.notes,
            "leaves": self.leaves,
            "gpus": self.gpus,
            "jobs": self.jobs,
        }


def drains_open(*, now: datetime, link_ids=None) -> QuerySet[LinkDrain]:
    """The drains in force at ``now``: not restored, their maintenance window still open (a
    drain whose planned end has passed no longer holds the link out of the rules)."""
    qs = LinkDrain.objects.filter(
        restored_at__isnull=True, window__starts_at__lte=now, window__ends_at__gt=now
    )
    return qs if link_ids is None else qs.filter(link_id__in=link_ids)


def drained_until(*, now, link_ref: str = "pk") -> Subquery:
    """Annotation: the end of the drain in force on the link ``link_ref`` names (None: not
    drained). ``now`` may be a datetime or ``Now()`` (a compiled read that takes no time)."""
    return Subquery(
        LinkDrain.objects.filter(
            link_id=OuterRef(link_ref),
            restored_at__isnull=True,
            window__starts_at__lte=now,
            window__ends_at__gt=now,
        )
        .order_by("-window__ends_at")
        .values("window__ends_at")[:1]
    )


def drains_overdue(*, now: datetime, link_ids=None) -> QuerySet[LinkDrain]:
    """The drains whose maintenance window ended without a restore: a link's latest drain (no
    drain after it on that link), not restored, its window's end at or before ``now``. The link
    is still out of service as far as anyone recorded, and the rules watch it again: restore it
    or extend the drain. ``now`` may be a datetime or ``Now()``."""
    later = LinkDrain.objects.filter(link_id=OuterRef("link_id"), drained_at__gt=OuterRef("drained_at"))
    qs = LinkDrain.objects.filter(restored_at__isnull=True, window__ends_at__lte=now).filter(~Exists(later))
    return qs if link_ids is None else qs.filter(link_id__in=link_ids)


def drain_overdue(*, now, field: str, link_ref: str = "pk") -> Subquery:
    """Annotation: ``field`` (``drained_at``, ``window__ends_at``, ``alert_id``) of the overdue
    drain on the link ``link_ref`` names (None: none)."""
    return Subquery(
        drains_overdue(now=now).filter(link_id=OuterRef(link_ref)).order_by("-drained_at").values(field)[:1]
    )


def _down_links(link_ids: set[int], now: datetime) -> dict[int, str]:
    """Of ``link_ids``, those already out of service, with why."""
    out: dict[int, str] = {}
    for lid, until in drains_overdue(now=now, link_ids=link_ids).values_list("link_id", "window__ends_at"):
        out[lid] = f"link {lid} drained, its window ended {until:%H:%M} UTC without a restore"
    for lid, until in drains_open(now=now, link_ids=link_ids).values_list("link_id", "window__ends_at"):
        out[lid] = f"link {lid} drained until {until:%H:%M} UTC"
    for lid, label, st in LinkSegment.objects.filter(
        link_id__in=link_ids, cable__status__in=DOWN_CABLE
    ).values_list("link_id", "cable__label", "cable__status"):
        out[lid] = f"cable {label} is {st}"
    for lid, rule in Alert.objects.filter(
        link_id__in=link_ids, state=AlertState.OPEN, rule__in=DOWN_RULES
    ).values_list("link_id", "rule"):
        out.setdefault(lid, f"open {rule} alert")
    return out


def drain_check(*, link_id: int, now: datetime, min_uplink_share: float) -> DrainVerdict:
    link = Link.objects.select_related("a_port__device", "b_port__device").get(pk=link_id)
    v = DrainVerdict(link_id=link_id, safe=True)
    ends = [link.a_port, link.b_port]
    if link.link_class == UPLINK_CLASS:
        for port in ends:
            dev = port.device
            if dev.role != DeviceRole.LEAF:
                continue
            uplinks = set(
                Link.objects.filter(
                    Q(a_port__device=dev) | Q(b_port__device=dev), active=True, link_class=UPLINK_CLASS
                ).values_list("id", flat=True)
            )
            down = _down_links(uplinks - {link_id}, now)
            remaining = len(uplinks) - len(down) - 1
            minimum = math.ceil(min_uplink_share * len(uplinks))
            v.leaves.append(
                {
                    "leaf": dev.name,
                    "uplinks": len(uplinks),
                    "down": len(down),
                    "remaining": remaining,
                    "minimum": minimum,
                }
            )
            if remaining < minimum:
                v.safe = False
                first = "; ".join(sorted(set(down.values()))[:5])
                v.reasons.append(
                    f"{dev.name} would keep {remaining} of its {len(uplinks)} uplinks, below its minimum of "
                    f"{minimum} ({min_uplink_share:.0%}): {len(down)} already down ({first}); repair those first"
                )
            else:
                v.notes.append(
                    f"{dev.name} keeps {remaining} of its {len(uplinks)} uplinks (minimum {minimum})"
                )
    for port in ends:
        dev = port.device
        if dev.role != DeviceRole.GPU_NODE:
            continue
        gpus = list(GpuNicMap.objects.filter(device_model=dev.model, port_name=port.name))
        for g in gpus:
            v.gpus.append({"host": dev.name, "gpu": g.gpu, "rail": g.rail})
        running = list(
            JobRank.objects.filter(port=port, job__started_at__lte=now)
            .filter(Q(job__ended_at__isnull=True) | Q(job__ended_at__gt=now))
            .select_related("job")
        )
        for jr in running:
            v.jobs.append({"job": jr.job.job_id, "rank": jr.rank, "host": dev.name, "gpu": jr.gpu})
        what = (
            ", ".join(f"GPU {g.gpu} of {dev.name} loses rail {g.rail}" for g in gpus)
            or f"{dev.name}:{port.name} goes dark"
        )
        if running:
            v.safe = False
            jobs = ", ".join(sorted({f"job {jr.job.job_id} (rank {jr.rank})" for jr in running}))
            v.reasons.append(f"{what} while {jobs} runs on it: wait for the job to end or move it first")
        else:
            v.notes.append(f"{what}; no running job uses it")
    return v
