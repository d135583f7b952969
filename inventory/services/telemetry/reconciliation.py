"""Create the module records telemetry shows are missing, in one reviewed step.

1. ``reconciliation_preview``: the engineer picks rows of the reconciliation report (or all of
   a site/rack); the preview says which records would be created (cage, model, serial) and
   which rows cannot be (with the reason), and returns a signed ``token`` that pins exactly
   what was reviewed. Nothing is written.
2. ``reconciliation_apply``: given that token, locks the cages, re-reads what telemetry and the
   plant say now, and creates every reviewed module in one transaction (with history naming
   the actor) through ``transceivers_install_new``. If any reviewed row became stale (telemetry
   now reports another serial, somebody recorded a module there, the model was changed) the
   whole step is refused with one message per stale row and nothing is written: the engineer
   previews again. Submitting the same token again (a double click, a client retry) creates
   nothing twice: rows already recorded exactly as reviewed are reported as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.core import signing
from django.core.exceptions import ValidationError
from django.db import transaction

from inventory.access import authz
from inventory.models import Cage, Transceiver, TransceiverModel
from inventory.selectors.telemetry.reconciliation import reconciliation_report
from inventory.selectors.telemetry.reconciliation_rows import ModuleRow, norm
from inventory.services.plant.transceivers import transceivers_install_new

TOKEN_SALT = "inventory.reconciliation.preview"  # noqa: S105 - a signing namespace, not a secret
TOKEN_MAX_AGE_S = 24 * 3600
REASON = "recorded from telemetry (reconciliation)"


class StaleRows(ValidationError):
    """Rows that changed since the preview: ``stale`` is ``[{"key", "message"}]``."""

    def __init__(self, stale: list[dict]):
        self.stale = stale
        super().__init__(
            f"{len(stale)} row(s) changed since the preview; nothing was created. Preview again."
        )


@dataclass
class Preview:
    create: list[ModuleRow]
    refused: list[dict]  # {"key", "message"}
    token: str

    def as_dict(self) -> dict:
        return {
            "create": [{**r.as_dict(), "model": r.model_id} for r in self.create],
            "refused": self.refused,
            "token": self.token,
        }


@dataclass
class Applied:
    created: list[Transceiver] = field(default_factory=list)
    already_recorded: list[Transceiver] = field(default_factory=list)


MAX_ROW_ID = 2**63 - 1  # the largest id a bigint primary key holds: any larger names no row


def _cage_ids(keys: list[str]) -> list[int]:
    out = []
    bad = []
    for k in keys:
        kind, _, num = str(k).partition(":")
        if kind != "cage" or not (num.isascii() and num.isdigit()):
            bad.append(str(k))
        elif int(num) <= MAX_ROW_ID:  # a larger id names no cage: the row is refused as unseen
            out.append(int(num))
    if bad:
        raise ValidationError({"keys": f"Not a module row of the report: {', '.join(bad[:10])}."})
    return out


def reconciliation_preview(
    *, actor, now: datetime, keys: list[str] | None = None, site: str | None = None, rack: str | None = None
) -> Preview:
    """What applying the chosen rows would create. ``keys`` (``cage:<id>``) or, when None, every
    missing module record of ``site``/``rack``."""
    if keys is None and not (site or rack):
        raise ValidationError({"all": "Choose rows, or a site or rack to take all of its missing records."})
    cage_ids = _cage_ids(keys) if keys is not None else None
    if keys is not None and not keys:
        raise ValidationError({"keys": "Select at least one row."})
    report = reconciliation_report(
        now=now, site=site, rack=rack, cage_ids=cage_ids, neighbours=False, include_ok=keys is not None
    )
    by_key = {r.key: r for r in report.modules}
    create, refused = [], []
    wanted = keys if keys is not None else [r.key for r in report.modules if r.status == "missing_record"]
    for k in wanted:
        r = by_key.get(k)
        if r is None:
            refused.append({"key": k, "message": "Nothing is seen or recorded in this cage now."})
        elif r.status != "missing_record":
            refused.append({"key": k, "message": _not_missing(r)})
        elif not r.creatable:
            refused.append({"key": k, "message": f"{r.device} {r.cage}: {r.problem}"})
        else:
            create.append(r)
    refusals = _site_refusals(actor, [r.cage_id for r in create])
    refused += [{"key": r.key, "message": refusals[r.cage_id]} for r in create if r.cage_id in refusals]
    create = [r for r in create if r.cage_id not in refusals]
    token = signing.dumps(
        {"u": getattr(actor, "pk", None), "rows": [[r.cage_id, r.model_id, r.seen_serial] for r in create]},
        salt=TOKEN_SALT,
        compress=True,
    )
    return Preview(create=create, refused=refused, token=token)


def _site_refusals(actor, cage_ids: list[int]) -> dict[int, str]:
    """Cage id -> why ``actor`` may not create a record there (``authz``, action ``import``,
    with the cage's site): records made from telemetry are an import, decided site by site."""
    if actor is None or not cage_ids:
        return {}
    site_of = dict(Cage.objects.filter(pk__in=cage_ids).values_list("pk", "device__rack__row__room__site_id"))
    refusals = authz.site_refusals(actor, "import", site_of.values())
    return {cage: refusals[site] for cage, site in site_of.items() if site in refusals}


def _not_missing(r: ModuleRow) -> str:
    where = f"{r.device} {r.cage}"
    if r.status == "ok":
        return f"{where}: module s/n {r.recorded_serial} is recorded and seen; nothing to create."
    if r.status == "swap":
        return (
            f"{where}: s/n {r.recorded_serial} is recorded but s/n {r.seen_serial} is seen: "
            "record the swap on the cable page instead."
        )
    return f"{where}: s/n {r.recorded_serial} is recorded but telemetry sees no module."


def reconciliation_apply(*, token: str, actor, now: datetime) -> Applied:
    """Create the reviewed module records, all or nothing. Raises ``ValidationError`` for a bad
    or expired token, ``StaleRows`` when the plant or telemetry changed since the preview."""
    try:
        data = signing.loads(token, salt=TOKEN_SALT, max_age=TOKEN_MAX_AGE_S)
    except signing.SignatureExpired as exc:
        raise ValidationError({"token": "This preview has expired; preview again."}) from exc
    except signing.BadSignature as exc:
        raise ValidationError({"token": "This is not a preview token from this server."}) from exc
    if data.get("u") != getattr(actor, "pk", None):
        raise ValidationError({"token": "This preview was made by someone else; preview it yourself."})
    reviewed = {int(c): (int(m), str(s)) for c, m, s in data.get("rows", [])}
    if not reviewed:
        raise ValidationError({"token": "The preview had nothing to create."})
    refusals = _site_refusals(actor, list(reviewed))
    if refusals:  # the team changed since the preview: nothing is created
        raise ValidationError({"token": sorted(set(refusals.values()))})
    with transaction.atomic():
        cages = {
            c.pk: c
            for c in Cage.objects.select_for_update()
            .filter(pk__in=list(reviewed))
            .select_related("device")
            .order_by("pk")
        }
        models = {
            m.pk: m
            for m in TransceiverModel.objects.select_related("vendor").filter(
                pk__in={m for m, _ in reviewed.values()}
            )
        }
        report = reconciliation_report(now=now, cage_ids=list(reviewed), neighbours=False)
        now_rows = {r.cage_id: r for r in report.modules}
        recorded = {
            x.cage_id: x
            for x in Transceiver.objects.filter(cage_id__in=list(reviewed)).select_related("model")
        }
        out = Applied()
        stale: list[dict] = []
        to_create = []
        for cage_id, (model_id, serial) in sorted(reviewed.items()):
            key = f"cage:{cage_id}"
            cage = cages.get(cage_id)
            model = models.get(model_id)
            if cage is None or model is None:
                stale.append({"key": key, "message": "The cage or the module model no longer exists."})
                continue
            where = f"{cage.device.name} {cage.name}"
            x = recorded.get(cage_id)
            if x is not None and x.model_id == model_id and norm(x.serial) == norm(serial):
                out.already_recorded.append(x)  # created by an earlier submission of this preview
                continue
            r = now_rows.get(cage_id)
            if x is not None:
                stale.append(
                    {
                        "key": key,
                        "message": f"{where}: module s/n {x.serial} was recorded here since the preview.",
                    }
                )
            elif r is None or not r.seen_serial:
                stale.append({"key": key, "message": f"{where}: telemetry no longer reports a module here."})
            elif norm(r.seen_serial) != norm(serial):
                stale.append(
                    {
                        "key": key,
                        "message": f"{where}: telemetry now reports s/n {r.seen_serial} (s/n {serial} at the preview).",
                    }
                )
            elif r.status != "missing_record" or r.model_id != model_id:
                stale.append({"key": key, "message": f"{where}: {r.problem or _not_missing(r)}"})
            else:
                to_create.append((cage, model, serial))
        if stale:
            raise StaleRows(stale)
        out.created = transceivers_install_new(rows=to_create, actor=actor, reason=REASON, now=now)
    return out
