"""The open conflicts of the latest NetBox/Nautobot sync of each site, for the page and the API."""

from __future__ import annotations

from django.db.models import Max

from inventory.models import SyncRun


def sync_conflicts_open() -> list[dict]:
    """Unresolved conflicts of each (source, site)'s latest sync run, newest run first.

    Earlier runs are superseded: whatever still conflicts was reported again by the latest.
    A cable conflict names the ports on both sides (``here``, ``source``) and its resolutions
    (``take_source``, ``keep_ours``); other conflicts (a module in another cage) carry a message.
    """
    latest = (
        SyncRun.objects.exclude(source__startswith="prometheus:")
        .values("source", "site")
        .annotate(last=Max("pk"))
        .values("last")
    )
    out = []
    for run in SyncRun.objects.filter(pk__in=latest).order_by("-started_at"):
        name = "Nautobot" if run.source.startswith("nautobot:") else "NetBox"
        for c in run.conflicts:
            detail = c.get("detail")
            structured = isinstance(detail, dict)
            if structured and detail.get("resolved"):
                continue
            out.append(
                {
                    "run": run.pk,
                    "source": run.source,
                    "source_name": name,
                    "site": run.site,
                    "at": run.started_at,
                    "kind": c.get("kind", ""),
                    "key": c.get("key", ""),
                    "message": detail.get("message", "") if structured else str(detail),
                    "here": detail.get("here") if structured else None,
                    "theirs": detail.get("source") if structured else None,
                    "resolutions": detail.get("resolutions", []) if structured else [],
                }
            )
    return out
