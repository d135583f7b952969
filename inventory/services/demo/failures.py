"""Failure history for the demo cluster: what the forecast learns from.

Called once at the end of ``demo_seed``. Deterministic by seed. Every installed module has
had the 2% annual failure rate's chance of failing since it was installed; one vendor's
monthly date-code lot (the largest Eoptolink lot at the site) was bad and failed at about
25% a year. Each failed module was swapped for a spare at the time (its placement ends
``failed``, a new module takes the cage); most went for RMA, mostly confirmed, some came back
"no trouble found" and sit in stock as spares. A few spares per part number wait at the site.

Writes: inserts through ``inventory.db.bulk`` (rows and history rows); the two updates (closing
placements, marking modules) through simple-history's ``bulk_update_with_history`` inside
``sanctioned_bulk_write``, so every change has its history record.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import date, datetime, timedelta

from simple_history.utils import bulk_update_with_history

from inventory.core.choices import PlacementEnd, RmaOutcome, TransceiverStatus
from inventory.db import bulk
from inventory.models import (
    RmaCase,
    Site,
    Transceiver,
    TransceiverModel,
    TransceiverPlacement,
    sanctioned_bulk_write,
)
from inventory.selectors.forecast.cohorts import lot_of
from inventory.services.demo.builder import seed_now

BAD_VENDOR = "Eoptolink"
BAD_LOT_AFR = 0.25
# bulk_update writes one CASE WHEN per row and PostgreSQL tests each row against every branch:
# one statement for the ~10,000 failures of a 131,072-GPU site was quadratic (minutes).
UPDATE_BATCH = 500


def demo_seed_failures(*, site: Site, seed: int, as_of: date, afr: float, w: dict) -> dict[str, int]:
    rng = random.Random(seed * 7919 + 17)
    now = seed_now(as_of)
    # Plain rows for every placement (thousands); model instances only for the few that fail.
    placements = list(
        TransceiverPlacement.objects.filter(removed_at__isnull=True, cage__device__rack__row__room__site=site)
        .order_by("pk")
        .values_list(
            "pk", "transceiver_id", "installed_at", "transceiver__model_id", "transceiver__date_code"
        )
    )
    bad_vendor_models = set(
        TransceiverModel.objects.filter(vendor__name=BAD_VENDOR).values_list("pk", flat=True)
    )
    lots = Counter(lot_of(date_code) for _, _, _, m, date_code in placements if m in bad_vendor_models)
    bad_lot = max(sorted(lots), key=lambda lot: lots[lot]) if lots else None

    chosen: list[tuple[int, int, datetime, bool]] = []  # placement, module, when, in the bad lot
    for pk, x_pk, installed_at, model_id, date_code in placements:
        years = max((now - installed_at).days, 0) / 365.0
        bad = model_id in bad_vendor_models and lot_of(date_code) == bad_lot
        rate = BAD_LOT_AFR if bad else afr
        if rng.random() < 1.0 - (1.0 - rate) ** years:
            when = installed_at + timedelta(days=rng.uniform(1, max(years * 365.0 - 1, 1.5)))
            chosen.append((pk, x_pk, min(when, now - timedelta(hours=1)), bad))
    placement_objs = TransceiverPlacement.objects.in_bulk([c[0] for c in chosen])
    module_objs = Transceiver.objects.in_bulk([c[1] for c in chosen])
    failed = [(placement_objs[pk], module_objs[x_pk], when) for pk, x_pk, when, _ in chosen]

    modules, replacements, rmas, new_placements = [], [], [], []
    for n, (p, x, when) in enumerate(failed):
        p.removed_at, p.end_reason = when, PlacementEnd.FAILED
        p.notes = "demo: failed in service"
        roll = rng.random()
        if roll < 0.55:  # RMA, failure confirmed
            x.status, x.stock_site = TransceiverStatus.RETIRED, None
            rmas.append([x, when + timedelta(days=2), when + timedelta(days=30), RmaOutcome.CONFIRMED])
        elif roll < 0.7:  # RMA, no trouble found: back to spares
            x.status, x.stock_site = TransceiverStatus.SPARE, site
            rmas.append([x, when + timedelta(days=2), when + timedelta(days=30), RmaOutcome.NO_TROUBLE_FOUND])
        elif roll < 0.8:  # out for RMA
            x.status, x.stock_site = TransceiverStatus.RMA, None
            rmas.append([x, when + timedelta(days=2), None, RmaOutcome.PENDING])
        else:  # failed, waiting on the shelf
            x.status, x.stock_site = TransceiverStatus.FAILED, None
        cage_id = x.cage_id
        x.cage = None
        modules.append(x)
        lot_day = when.date() - timedelta(days=rng.randint(30, 90))
        replacements.append(
            (
                Transceiver(
                    model_id=x.model_id,
                    serial=f"RP{seed:02d}{n:06d}",
                    firmware=x.firmware,
                    date_code=f"{lot_day:%y%m%d}",
                    status=TransceiverStatus.INSTALLED,
                    cage_id=cage_id,
                    acquired_on=lot_day + timedelta(days=14),
                ),
                cage_id,
                when,
            )
        )

    reason = dict(w, reason=f"{w.get('reason', 'seed_demo')}: failure history")
    with sanctioned_bulk_write():
        bulk_update_with_history(
            [p for p, _, _ in failed],
            TransceiverPlacement,
            ["removed_at", "end_reason", "notes"],
            batch_size=UPDATE_BATCH,
            default_change_reason="failed in service",
            default_date=now,
        )
        bulk_update_with_history(
            modules,
            Transceiver,
            ["status", "stock_site", "cage"],
            batch_size=UPDATE_BATCH,
            default_change_reason="failed in service",
            default_date=now,
        )
    bulk.bulk_insert(Transceiver, [r for r, _, _ in replacements], **reason)
    for r, cage_id, when in replacements:
        new_placements.append([r.pk, cage_id, when])
    bulk.bulk_insert_rows(
        TransceiverPlacement, ["transceiver_id", "cage_id", "installed_at"], new_placements, **reason
    )
    bulk.bulk_insert_rows(
        RmaCase,
        ["transceiver_id", "reference", "opened_at", "closed_at", "outcome"],
        [[x.pk, f"RMA-{seed}-{i:05d}", o, c, out] for i, (x, o, c, out) in enumerate(rmas)],
        **reason,
    )

    # A few spares per part number kept at the site.
    models_in_use = sorted({m for _, _, _, m, _ in placements})
    spares = [
        Transceiver(
            model_id=m,
            serial=f"SP{seed:02d}{m:04d}{k:03d}",
            date_code=f"{as_of - timedelta(days=60):%y%m%d}",
            status=TransceiverStatus.SPARE,
            stock_site=site,
            acquired_on=as_of - timedelta(days=30),
        )
        for m in models_in_use
        for k in range(rng.randint(0, 3))
    ]
    bulk.bulk_insert(Transceiver, spares, **reason)
    return {
        "failed_modules": len(failed),
        "bad_lot_failures": sum(1 for *_, bad in chosen if bad),
        "rma_cases": len(rmas),
        "spares": len(spares),
    }


__all__ = ["BAD_LOT_AFR", "BAD_VENDOR", "demo_seed_failures"]
