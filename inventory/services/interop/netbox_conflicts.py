"""Resolving a sync conflict: a cable whose ends differ here and in NetBox (or Nautobot).

Two ways out, chosen by a person (never guessed by the sync):

* ``take_source``: the cable here is re-terminated on the ports the source names (its ends
  are moved in place, with history naming the person), and links are refreshed;
* ``keep_ours``: the cable here stays; the source's ends are remembered on the cable's
  ``ExternalRef`` so later syncs report it unchanged, until the source moves it again.

Either way the conflict is marked resolved on its ``SyncRun`` (who, when, which way).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from inventory.access import authz
from inventory.models import Cable, CableEnd, ExternalRef, Port, SyncRun
from inventory.services.plant import cable_sites
from inventory.services.plant import links as link_services

RESOLUTIONS = ("take_source", "keep_ours")


@transaction.atomic
def sync_conflict_resolve(*, run_id: int, cable_label: str, take: str, actor=None) -> dict:
    """Resolve the open cable conflict ``cable_label`` of sync run ``run_id``; returns it.

    Refuses (``ValidationError``, nothing written) an unknown run, a cable with no open
    conflict there, an unknown resolution, and source ports that another cable holds here.
    """
    if take not in RESOLUTIONS:
        raise ValidationError({"take": f"Choose one of {', '.join(RESOLUTIONS)}."})
    run = SyncRun.objects.select_for_update().filter(pk=run_id).first()
    if run is None:
        raise ValidationError({"run": f"Sync run {run_id} does not exist."})
    conflict = next(
        (
            c
            for c in run.conflicts
            if c.get("kind") == "cable"
            and c.get("key") == cable_label
            and isinstance(c.get("detail"), dict)
            and c["detail"].get("resolutions")
            and not c["detail"].get("resolved")
        ),
        None,
    )
    if conflict is None:
        raise ValidationError(
            {"cable": f"No cable labelled {cable_label} has an open conflict in sync run {run_id}."}
        )
    detail = conflict["detail"]
    cable = Cable.objects.select_for_update().filter(label=cable_label).first()
    if cable is None:
        raise ValidationError({"cable": f"No cable labelled {cable_label} here."})
    if actor is not None:  # an import's resolution, decided with the cable's sites (403)
        authz.check(actor, "import", cable)
    who = actor.get_username() if actor is not None and actor.is_authenticated else "someone"
    name = "Nautobot" if run.source.startswith("nautobot:") else "NetBox"
    if take == "take_source":
        _move_ends(cable, detail["source_ports"], reason=f"took {name}'s ends ({who}, sync run {run.pk})")
    else:
        ref = ExternalRef.objects.filter(
            source=run.source, kind="cable", external_id=detail["external_id"]
        ).first()
        if ref is None:
            raise ValidationError({"cable": f"{cable_label} is not linked to {name} any more."})
        ref.attributes = {**ref.attributes, "kept_ours": detail["source_ports"]}
        ref.save(update_fields=["attributes"])
    detail["resolved"] = {"take": take, "by": who, "at": timezone.now().isoformat()}
    run.save(update_fields=["conflicts"])
    return conflict


def _move_ends(cable: Cable, source_ports: dict[str, list[int]], *, reason: str) -> None:
    """Re-terminate the cable's active ends, leg by leg, on the source's ports."""
    ends = list(cable.ends.filter(active=True).order_by("side", "leg"))
    wanted = {p.pk: p for p in Port.objects.filter(pk__in=[*source_ports["A"], *source_ports["B"]])}
    before: list[int] = []
    moves = []
    for side in ("A", "B"):
        legs = [e for e in ends if e.side == side]
        if len(legs) != len(source_ports[side]):
            raise ValidationError(
                {
                    "cable": f"{cable.label} has {len(legs)} end(s) on side {side} here and "
                    f"{len(source_ports[side])} in the source: retire it here and sync again."
                }
            )
        moves += list(zip(legs, source_ports[side], strict=True))
    for e in ends:
        before += _ports_at(e)
    for e, port_id in moves:
        port = wanted.get(port_id)
        if port is None:
            raise ValidationError({"cable": f"A port of {cable.label} in the source is gone here."})
        term = (
            {"cage_id": port.cage_id, "connector": port.connector, "port_id": None}
            if port.cage_id
            else {"cage_id": None, "connector": None, "port_id": port.pk}
        )
        holder = (
            CableEnd.objects.filter(active=True, **{k: v for k, v in term.items() if v is not None})
            .exclude(cable=cable)
            .select_related("cable")
            .first()
        )
        if holder is not None:
            raise ValidationError(
                {
                    "cable": f"{port.device.name} {port.name} holds {holder.cable.label} here: "
                    "move or retire it first."
                }
            )
        for k, v in term.items():
            setattr(e, k, v)
        e._change_reason = reason
        e.save()
    after = [p for e in ends for p in _ports_at(e)]
    cable_sites.cable_sites_refresh(cable_ids=[cable.pk])
    link_services.links_refresh_for_ports(port_ids=sorted(set(before + after)))


def _ports_at(end: CableEnd) -> list[int]:
    if end.port_id:
        return [end.port_id]
    return list(
        Port.objects.filter(cage_id=end.cage_id, connector=end.connector).values_list("pk", flat=True)
    )
