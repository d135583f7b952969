"""Import (and re-import, and sync) one NetBox site (or Nautobot location) into the plant.

Nautobot is read by ``inventory.core.interop.nautobot`` into NetBox's shapes, so the walk
below serves both; ``snapshot.flavor`` names the source in references and messages.

The importer runs the same code for a dry run and for real: a dry run executes inside a
transaction that is rolled back, so the report of what would be created, changed, left alone
(and why) is exactly what applying would do. Re-running is idempotent: every imported object
is remembered in ``ExternalRef`` by its NetBox id. A cable whose ends differ here and in
NetBox is a *conflict*: reported, never guessed. Test records and history are never touched.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.core.interop.netbox import NetboxError, NetboxSnapshot, source_fetch
from inventory.db import bulk
from inventory.models import (
    Cable,
    CableEnd,
    Cage,
    Device,
    ExternalRef,
    Link,
    LinkSegment,
    Port,
    PortAlias,
    PortMapping,
    Rack,
    Site,
    SyncRun,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    Vendor,
)
from inventory.services.interop.netbox_report import NetboxPlan
from inventory.services.interop.netbox_walk import NetboxImporter

#: Tables a NetBox import fills; a large import refreshes their planner statistics.
_WRITTEN_MODELS = (
    Vendor,
    Site,
    Rack,
    Device,
    Cage,
    TransceiverModel,
    Transceiver,
    TransceiverPlacement,
    Port,
    PortAlias,
    PortMapping,
    Cable,
    CableEnd,
    Link,
    LinkSegment,
    ExternalRef,
)


class _Rollback(Exception):
    pass


def netbox_import(*, snapshot: NetboxSnapshot, dry_run: bool = True, actor=None) -> NetboxPlan:
    """Import one NetBox site: a dry run reports, an apply writes everything in one transaction."""
    plan = NetboxPlan(source=snapshot.source, site=snapshot.site, dry_run=dry_run)
    try:
        with transaction.atomic():
            NetboxImporter(snapshot, plan, actor).run()
            written = sum(1 for c in plan.changes if c.action in ("create", "change"))
            bulk.analyze_on_commit(*_WRITTEN_MODELS, rows=written)  # dropped with a dry run
            if dry_run:
                raise _Rollback
    except _Rollback:
        pass
    return plan


def sync_run_record(*, snapshot: NetboxSnapshot, plan: NetboxPlan, started_at) -> SyncRun:
    """Record an applied import (``manage.py netbox_import --apply``) as a sync run, so its
    conflicts are listed and resolved where the periodic sync's are (``/sync/conflicts/``)."""
    report = plan.as_dict()
    return SyncRun.objects.create(
        source=f"{snapshot.flavor}:{snapshot.source}",
        site=snapshot.site,
        started_at=started_at,
        finished_at=timezone.now(),
        summary=report["summary"],
        conflicts=report["conflicts"],
    )


def netbox_sync(*, url: str, token: str, sites: list[str], flavor: str = "netbox", now=None) -> list:
    """Fetch and apply each site; conflicts are recorded on the run, never resolved by guessing."""
    runs = []
    for site in sites:
        run = SyncRun.objects.create(
            source=f"{flavor}:{url.rstrip('/')}", site=site, started_at=now or timezone.now()
        )
        try:
            snapshot = source_fetch(url=url, token=token, site=site, flavor=flavor)
            plan = netbox_import(snapshot=snapshot, dry_run=False)
            report = plan.as_dict()
            run.summary, run.conflicts = report["summary"], report["conflicts"]
        except (NetboxError, ValidationError) as exc:
            run.error = str(exc)
        run.finished_at = timezone.now()
        run.save()
        runs.append(run)
    return runs
