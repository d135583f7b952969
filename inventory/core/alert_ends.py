"""Which cable of an alert's link: the one the alert degrades, its page leads to, and a repair
recorded at one of its ends lands on. Pure: no ORM.

A link through a patch panel runs over several cables (``[leaf]--J1--[panel]==T1==[panel]--J2--
[spine]``), and its two ends are plugged with two different cables. Everything that names "the"
cable of an alert reads this module, so the cable the alert marks degraded is the cable plugged
at the end its page says to look at first, and "End A" on the page, in the repair form and in the
watching words is the same cable end:

* ``worst_end``: the link end ("a"/"b") the rule's per-end evidence names (the end that flaps, the
  receiver that sees the errors), or None when both ends show it alike.
* ``cable_at``: the cable at a link end: the path is ordered from the link's A port, so the first
  segment is plugged at end "a" and the last at end "b".
* ``alert_cable``: the one cable the alert names (and degrades): the cable at ``worst_end``; with
  no worst end, the segment with the least test margin, else the first.
* ``repair_target``: the cable end a repair "at End X" is recorded against, from the ends the
  alert page shows (``PluggedEnd``) and the cable the technician named.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

# What makes one end worse than the other, per rule (keys of that rule's per-end evidence):
# the end with the larger sum is where to look first. The words say what that end is.
END_SCORE: dict[str, tuple[tuple[str, ...], str]] = {
    "link_flap": (("link_down", "error_recovery"), "the end that flaps (reports the link-down events)"),
    "fec_degradation": (("value",), "the end whose receiver sees the errors"),
    "fec_tail": (("codewords_over_80pct", "codewords_40_80pct"), "the end whose receiver sees the errors"),
    "fec_uncorrectable": (("uncorrectable_cw",), "the end whose receiver sees the errors"),
    "rx_power_drift": (("worst_drop_db",), "the end whose receive power dropped"),
    "link_degraded": ((), "the end running below its speed or width"),
    "pfc_storm": (("pause_frames_sent_per_s", "burst_sent_per_s"), "the end that sends the pause frames"),
    "tail_latency_spike": ((), "either end"),  # the FEC evidence is the suspect link's, both ends
}


def worst_end_words(rule: str) -> str:
    return END_SCORE.get(rule, ((), "the end to look at first"))[1]


def worst_end(rule: str, ends: dict | None) -> str | None:
    """The link end ("a" or "b") the evidence says to look at first, None when alike or unknown."""
    ends = ends or {}
    keys, _ = END_SCORE.get(rule, ((), ""))
    sides = [s for s in ("a", "b") if isinstance(ends.get(s), dict)]
    if len(sides) == 1:
        return sides[0]
    if not keys or len(sides) != 2:
        return None
    score = {s: sum(float(ends[s].get(k) or 0) for k in keys) for s in sides}
    if score["a"] == score["b"]:
        return None
    return max(sides, key=lambda s: score[s])


def cable_at(path: Sequence[T], key: str) -> T | None:
    """The cable plugged at link end ``key`` of a path ordered from the link's A port."""
    if not path or key not in ("a", "b"):
        return None
    return path[0] if key == "a" else path[-1]


def alert_cable(
    *, rule: str, ends: dict | None, path: Sequence[T], margin: Callable[[T], float | None]
) -> tuple[T | None, str]:
    """(cable, link end): the one cable an alert names, marks degraded and leads to.

    The cable plugged at the end the evidence names (``worst_end``: where the page sends the
    technician first), so a repair at that end lands on the cable the alert degraded. With no
    such end (both ends alike, no per-end evidence): the segment with the least test margin,
    else the first; the end is then "" (the page names no end to look at first)."""
    if not path:
        return None, ""
    key = worst_end(rule, ends)
    if key is not None:
        return cable_at(path, key), key
    margins = [(m, i) for i, c in enumerate(path) if (m := margin(c)) is not None]
    return (path[min(margins)[1]] if margins else path[0]), ""


@dataclass(frozen=True, slots=True)
class PluggedEnd:
    """One end the alert page shows: the link end, and the cable end plugged in that port's cage
    as the cable page names it (``side``: "A", "B", "B2" for a breakout leg)."""

    key: str  # "a", "b" or "port"
    side: str
    cable_id: int
    label: str

    @property
    def letter(self) -> str:
        return self.side[:1]


class RepairTargetError(ValueError):
    """The end named is not one the alert shows, or names two cables' ends alike."""


def repair_target(
    *, plugged: Sequence[PluggedEnd], path: Sequence[tuple[int, str]], end: str, cable: str = ""
) -> int | None:
    """The cable (id) a repair "at ``end``" (A, B, both, na) is recorded against, or None.

    ``plugged``: the ends the alert page shows; ``path``: (id, label) of every cable of the
    alert's link; ``cable``: the label the technician chose with the end (the page's form sends
    it; the API may). End A or B without a cable: the end the page names so; with a cable: that
    cable's end (a cable of the path: the panel end of a trunk is a real place too). Both ends:
    the named cable, else the link's one cable, else None (both ends of a link over several
    cables). Raises ``RepairTargetError`` for an end the alert does not show, or when both ends
    of the link are named alike (End A of two cables) and no cable says which."""
    labels = {label: pk for pk, label in path}
    labels.update({p.label: p.cable_id for p in plugged})
    if cable:
        if cable not in labels:
            raise RepairTargetError(
                f"{cable} is not a cable of this alert's link: choose one of {', '.join(sorted(labels))}."
            )
        return labels[cable]
    if end in ("A", "B"):
        named = {p.cable_id: p for p in plugged if p.letter == end}
        if len(named) == 1:
            return next(iter(named))
        shown = ", ".join(f"End {p.side} of {p.label}" for p in plugged) or "no cable end"
        if named:
            raise RepairTargetError(f"Both ends of this link are End {end} ({shown}): name the cable too.")
        if len(path) == 1:
            return path[0][0]
        raise RepairTargetError(f"This alert shows no End {end}: it shows {shown}.")
    return path[0][0] if len(path) == 1 else None
