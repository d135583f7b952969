"""Printing labels: render a selection inline, or as a background batch for thousands.

Who may print (``labels_check_permission``): printing is an engineer action
(``inventory.print_labels``: any selection, background batches). A technician
(``inventory.print_cable_label``) may print the labels of one cable at a time, the cable
they are replacing or relabelling, rendered inline. Viewers may not print. The management
command runs as the operator and is not restricted.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from inventory.access import authz
from inventory.conf import app_settings
from inventory.core import labels as layout
from inventory.core.choices import LabelBatchStatus, LabelKind
from inventory.models import Cable, LabelBatch
from inventory.selectors.labels import facts as label_selectors
from inventory.selectors.labels.facts import LabelSelection
from inventory.services.ops.enqueue import enqueue_now, enqueue_on_commit

log = logging.getLogger(__name__)

CONTENT_TYPES = {"pdf": "application/pdf", "zpl": "application/octet-stream"}
STALE_AFTER = timedelta(minutes=10)  # a running batch with no heartbeat for this long is re-run
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class LabelPlan:
    """A selection resolved to ids: what would be printed, and how many labels that is."""

    kind: str
    stock: str
    fmt: str
    cable_ids: list[int]
    rack_ids: list[int]
    count: int
    description: str


@dataclass(frozen=True)
class RenderedLabels:
    content: bytes
    filename: str
    content_type: str
    count: int


def _check_output(stock: str, fmt: str) -> dict:
    errors = {}
    if stock not in layout.STOCKS:
        errors["stock"] = f"Unknown stock {stock!r}; choose one of: {', '.join(layout.STOCKS)}."
    if fmt not in layout.FORMATS:
        errors["format"] = f"Unknown format {fmt!r}; choose pdf or zpl."
    return errors


def labels_plan(
    *, selection: LabelSelection, kind: str = LabelKind.CABLE, stock: str = "", fmt: str = "pdf"
) -> LabelPlan:
    """Resolve a selection. Raises ValidationError (per field) for unknown cables, racks, rows,
    stocks or formats, and for a selection that prints nothing."""
    stock = stock or (layout.DEFAULT_RACK_STOCK if kind == LabelKind.RACK else layout.DEFAULT_CABLE_STOCK)
    errors = _check_output(stock, fmt)
    if errors:
        raise ValidationError(errors)
    if kind == LabelKind.RACK:
        rack_ids = label_selectors.label_rack_ids(selection=selection)
        plan = LabelPlan(
            kind, stock, fmt, [], rack_ids, len(rack_ids), "rack labels: " + selection.describe()
        )
    else:
        cable_ids = label_selectors.label_cable_ids(selection=selection)
        count = label_selectors.label_count(cable_ids=cable_ids)
        plan = LabelPlan(kind, stock, fmt, cable_ids, [], count, selection.describe())
    if not plan.count:
        raise ValidationError({"__all__": "Nothing to print: the selection has no labels."})
    return plan


def labels_check_permission(*, user, plan: LabelPlan, selection: LabelSelection) -> None:
    """Engineers print anything; technicians one cable's labels; viewers nothing."""
    if authz.can(user, "print_labels"):
        return
    if authz.can(user, "print_cable_label"):
        single = (
            plan.kind == LabelKind.CABLE
            and len(plan.cable_ids) == 1
            and selection.cables
            and not (selection.racks or selection.rows or selection.changed_since)
        )
        if single:
            authz.check(user, "print_cable_label", Cable.objects.get(pk=plan.cable_ids[0]))  # its site
            return
        raise PermissionDenied(
            "Technicians print the labels of one cable at a time; batches are for engineers."
        )
    raise PermissionDenied("Printing labels needs the engineer or technician role.")


def _labels_for(plan_kind: str, cable_ids: list[int], rack_ids: list[int]) -> list:
    base = app_settings.base_url
    if plan_kind == LabelKind.RACK:
        return label_selectors.rack_label_facts(rack_ids=rack_ids, base_url=base)
    return label_selectors.cable_label_facts(cable_ids=cable_ids, base_url=base)


def _render(labels: list, stock: str, fmt: str, progress=None) -> bytes:
    st = layout.get_stock(stock)
    if fmt == "pdf":
        return layout.render_pdf(labels, st, progress=progress)
    return layout.render(labels, st, fmt)


def labels_render(*, plan: LabelPlan, now: datetime) -> RenderedLabels:
    """Render a (small) plan in this process."""
    labels = _labels_for(plan.kind, plan.cable_ids, plan.rack_ids)
    content = _render(labels, plan.stock, plan.fmt)
    return RenderedLabels(
        content=content,
        filename=f"labels-{now:%Y%m%d-%H%M%S}.{plan.fmt}",
        content_type=CONTENT_TYPES[plan.fmt],
        count=len(labels),
    )


def label_batch_create(*, plan: LabelPlan, user=None) -> LabelBatch:
    """Record a batch and enqueue its rendering once the transaction commits."""
    batch = LabelBatch.objects.create(
        created_by=user if user is not None and user.is_authenticated else None,
        description=plan.description,
        kind=plan.kind,
        stock=plan.stock,
        fmt=plan.fmt,
        cable_ids=plan.cable_ids,
        rack_ids=plan.rack_ids,
        total=plan.count,
    )
    enqueue_on_commit("inventory.label_batch_render", batch.pk)
    return batch


def _batch_path(batch: LabelBatch) -> tuple[str, Path]:
    name = f"labels/{batch.uid}.{batch.fmt}"
    return name, Path(settings.MEDIA_ROOT) / name


def label_batch_run(*, batch_id: int, now: datetime) -> LabelBatch | None:
    """Render a batch to its file. Idempotent: a finished batch is left alone; a re-delivered
    or re-enqueued one renders again from the start and replaces the file atomically."""
    batch = LabelBatch.objects.filter(pk=batch_id).first()
    if batch is None or batch.status == LabelBatchStatus.DONE:
        return batch
    LabelBatch.objects.filter(pk=batch.pk).update(
        status=LabelBatchStatus.RUNNING,
        started_at=now,
        updated_at=now,
        done=0,
        error="",
        attempts=batch.attempts + 1,
    )
    try:
        labels = _labels_for(batch.kind, batch.cable_ids, batch.rack_ids)
        total = len(labels)

        def progress(done: int) -> None:
            # The heartbeat, every few hundred labels: wall-clock time on purpose, it tells the
            # sweep this worker is alive.
            LabelBatch.objects.filter(pk=batch.pk).update(done=done, total=total, updated_at=timezone.now())

        content = _render(labels, batch.stock, batch.fmt, progress=progress)
        name, path = _batch_path(batch)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
        tmp.write_bytes(content)
        os.replace(tmp, path)
    except Exception as exc:
        log.exception("label batch %s failed", batch.uid)
        LabelBatch.objects.filter(pk=batch.pk).update(
            status=LabelBatchStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
        raise
    LabelBatch.objects.filter(pk=batch.pk).update(
        status=LabelBatchStatus.DONE,
        file=name,
        done=total,
        total=total,
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )
    batch.refresh_from_db()
    return batch


def label_batches_requeue(*, now: datetime) -> list[int]:
    """Re-enqueue batches whose message was lost (broker down at commit) or whose worker died:
    queued or running with no heartbeat for ``STALE_AFTER``, fewer than ``MAX_ATTEMPTS`` tries."""
    stale = LabelBatch.objects.filter(
        status__in=[LabelBatchStatus.QUEUED, LabelBatchStatus.RUNNING], updated_at__lt=now - STALE_AFTER
    )
    stale.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=LabelBatchStatus.FAILED, error=f"Gave up after {MAX_ATTEMPTS} attempts.", updated_at=now
    )
    stale = list(stale.filter(attempts__lt=MAX_ATTEMPTS).values_list("pk", flat=True))
    for pk in stale:
        LabelBatch.objects.filter(pk=pk).update(updated_at=now)
        enqueue_now("inventory.label_batch_render", pk)
    return stale
