"""A realistic, deterministic demo cluster (``manage.py seed_demo``).

Rail-optimised leaf-spine: scalable units (SU) of 32 GPU nodes (8 GPUs, 8x 400G NICs in four
twin-port OSFP cages each). NIC ``ethK`` of every node in an SU goes to that SU's rail-K leaf
over an MPO-12/APC single-mode jumper. Leaf uplinks run leaf -> jumper -> SU patch panel ->
144-fibre MPO trunk (12 positions) -> spine-row panel -> jumper -> spine. Each node also has a
200G front-end port on a short DAC to the rack's front-end switch and a BMC on Cat6A to the
rack's management switch. Install dates spread over two years before ``as_of``; fibre cables
carry commissioning power-meter tests, some with 90-day retests, some overdue.

Everything is built as plain records (``builder.Table``), not model instances, and written with
the sanctioned bulk writer (rows + history rows), so 4,096 GPUs take seconds, not minutes. The
steps live beside this module (``catalogue``, ``topology``, ``cabling``, ``commissioning``);
they share one random source, so their order here is part of what the seed produces.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date

from django.apps import apps
from django.db import transaction

from inventory.conf import app_settings
from inventory.core.perf import gc_paused
from inventory.db import bulk, pipeline
from inventory.models import (
    Cable,
    CableEnd,
    Cage,
    Device,
    Link,
    LinkSegment,
    Port,
    PortAlias,
    PortMapping,
    Site,
    Transceiver,
    TransceiverPlacement,
)
from inventory.services.demo.builder import Builder, seed_now
from inventory.services.demo.cabling import seed_node_cables, seed_transceivers, seed_uplink_cables
from inventory.services.demo.catalogue import seed_catalogue, seed_locations
from inventory.services.demo.commissioning import plan_tests, seed_links, seed_tests
from inventory.services.demo.failures import demo_seed_failures
from inventory.services.demo.incidents import demo_seed_incidents
from inventory.services.demo.jobs import demo_seed_jobs
from inventory.services.demo.topology import seed_nodes, seed_panels, seed_switches, write_equipment
from inventory.services.plant import cable_sites


@dataclass
class SeedReport:
    skipped: bool = False
    site: str = ""
    counts: dict[str, int] = field(default_factory=dict)


def _analyze_on_commit() -> None:
    """Refresh the planner's statistics once the seed has committed.

    Without them PostgreSQL plans every query against empty-table estimates (a few hundred
    rows) until autovacuum gets round to it: the cable list's end prefetch then hash-joins
    every port and cage (43 ms instead of 2 ms for a page of 50). The history tables too: the
    cable page reads a cable's and its ends' history by id, and with no statistics the planner
    expects 2,000 rows per id at 131,072 GPUs and starts parallel workers for each (8-9 ms a
    query instead of 0.1). ANALYZE samples a fixed number of rows per table: 3.6 s for every
    history table at that size.
    """
    bulk.analyze_on_commit(*apps.get_app_config("inventory").get_models())


@transaction.atomic
def demo_seed(*, gpus: int, seed: int = 1, as_of: date | None = None, actor=None) -> SeedReport:
    """Build the demo cluster, or do nothing if this seed's site already exists."""
    as_of = as_of or date.today()  # noqa: DTZ011 - a calendar day, not an instant
    site_name = f"Demo Hall {seed}"
    if Site.objects.filter(name=site_name).exists():
        return SeedReport(skipped=True, site=site_name)
    if gpus < 8 or gpus > 131_072:
        raise ValueError("--gpus must be between 8 and 131,072")
    # Millions of small records stay alive until the end (a 131,072-GPU plant in memory): with the
    # cyclic collector on, each burst of allocations walked all of them again (see gc_paused).
    with gc_paused(), bulk.foreign_keys_checked_at_end(_written_models()):
        report = _build(gpus=gpus, seed=seed, as_of=as_of, actor=actor, site_name=site_name)
    _analyze_on_commit()
    return report


def _set_cable_sites(b: Builder) -> None:
    """``Cable.site`` on the cable records before they are written (the devices are already):
    the rule of ``cable_sites``, from the ends in hand, instead of an UPDATE of every cable."""
    devices: dict[int, list[int | None]] = defaultdict(list)
    for e in b.ends:  # in (side, leg) order per cable, as the builder adds them
        term = e.__dict__.get("port") or e.__dict__.get("cage")
        devices[id(e.cable)].append(term.device.pk if term is not None else None)
    sites = cable_sites.first_placed_sites([devices[id(c)] for c in b.cables])
    for c, site in zip(b.cables, sites, strict=True):
        c.site_id = site


def _written_models() -> list:
    return [
        m
        for m in apps.get_app_config("inventory").get_models()
        if not m._meta.db_table.startswith("inventory_historical")  # written, never queried hot
    ]


def _build(*, gpus: int, seed: int, as_of: date, actor, site_name: str) -> SeedReport:
    b = Builder(gpus=gpus, seed=seed, as_of=as_of, site_name=site_name)
    now = seed_now(as_of)
    w = dict(actor=actor, reason=f"seed_demo --gpus {gpus} --seed {seed}", now=now)

    # The plant is loaded into tables without their secondary indexes, which are built once at
    # the end of the block; the failure history and incidents read it through them afterwards.
    # Its writes run on a writer thread while the next rows are built (``pipeline``): the
    # server's half of the load and Python's half overlap instead of taking turns.
    with bulk.indexes_built_at_end(_written_models()) as built_now, pipeline.writes_in_background():
        cat = seed_catalogue(w=w)
        loc = seed_locations(b, seed=seed, team=cat.team, w=w)
        switches = seed_switches(b, loc=loc, vendors=cat.vendors)
        nodes = seed_nodes(b, loc=loc, vendors=cat.vendors)
        panels = seed_panels(b, loc=loc, vendors=cat.vendors)
        write_equipment(b, nodes=nodes, panels=panels, now=now, w=w)
        built_now(Device, Cage, Port, PortAlias, PortMapping)  # each table's, once it is written
        su_install, transceivers = seed_transceivers(b, cat=cat, nodes=nodes, switches=switches, w=w)
        built_now(Transceiver, TransceiverPlacement)
        seed_node_cables(b, nodes=nodes, switches=switches, su_install=su_install, vendors=cat.vendors)
        seed_uplink_cables(b, switches=switches, panels=panels, su_install=su_install, vendors=cat.vendors)
        plans = plan_tests(b)
        _set_cable_sites(b)
        b.cable_t.write(**w)
        b.end_t.write(**w)
        built_now(Cable, CableEnd)
        links = seed_links(b, w=w)
        built_now(Link, LinkSegment)
        tests = seed_tests(b, plans=plans, seed=seed, w=w, built_now=built_now)
    failures = demo_seed_failures(
        site=loc.site, seed=seed, as_of=as_of, afr=app_settings.annual_failure_rate, w=w
    )
    incidents = demo_seed_incidents(site=loc.site, seed=seed, now=now, w=w)
    jobs = demo_seed_jobs(site=loc.site, seed=seed, now=now)  # after the incidents: a clean rail
    return SeedReport(
        site=site_name,
        counts={
            **failures,
            **incidents,
            **jobs,
            "gpus": gpus,
            "nodes": b.nodes,
            "leaves": b.leaves,
            "spines": b.spines,
            "devices": len(b.devices),
            "ports": len(b.ports),
            "cables": len(b.cables),
            "transceivers": transceivers,
            "links": links,
            "tests": tests,
        },
    )
