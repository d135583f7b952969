"""Both ends of a page of cables as text lines (``rack U<u> device port``), in one flat query:
the cable list's end cells and the retest worklist (whose rows are not cable instances)."""

from __future__ import annotations

from inventory.models import CableEnd
from inventory.models.cables import END_PLACE_COLUMNS


def end_lines(
    cable_ids: list[int], *, active_only: bool = True, keep_unterminated: bool = False
) -> dict[int, tuple[list[str], list[str]]]:
    """``{cable_id: (A lines, B lines)}``; a breakout has one line per leg.

    ``active_only=False`` includes ends no longer in use (the desk list shows a cable's every
    end); ``keep_unterminated`` keeps an empty line for an end plugged into nothing.
    """
    out: dict[int, tuple[list[str], list[str]]] = {pk: ([], []) for pk in cable_ids}
    rows = CableEnd.objects.filter(cable_id__any=cable_ids)
    if active_only:
        rows = rows.filter(active=True)
    rows = rows.order_by("cable_id", "side", "leg").values_list(
        "cable_id", "side", "connector", *END_PLACE_COLUMNS
    )
    for cable_id, side, conn, port_id, pname, pdev, prack, pu, cage_id, cname, cdev, crack, cu in rows:
        if port_id:
            line = f"{prack or ''} U{pu or '?'} {pdev} {pname}"
        elif cage_id:
            line = f"{crack or ''} U{cu or '?'} {cdev} {cname}" + (f"/{conn}" if conn and conn > 1 else "")
        elif keep_unterminated:
            line = ""
        else:
            continue
        out[cable_id][0 if side == "A" else 1].append(line.strip())
    return out
