"""Who is responsible for racks and cables: the team of each rack (else its row, else its
site), and the addresses to tell with why each is told (:class:`core.mail.Addressee`)."""

from __future__ import annotations

from dataclasses import dataclass

from inventory.core.mail import Addressee
from inventory.core.words import and_list
from inventory.models import CableEnd, Rack, Row, Site, Team


@dataclass(frozen=True)
class Responsible:
    """A team, and the racks (of those asked about) it looks after."""

    team: Team
    racks: tuple[str, ...]

    @property
    def reason(self) -> str:
        racks = and_list(self.racks)
        return f"are on team {self.team.name}, which looks after rack{'s' if len(self.racks) > 1 else ''} {racks}"


def rack_teams(*, rack_ids) -> list[Responsible]:
    """The teams responsible for these racks (nearest level wins per rack), each with the racks it
    looks after, members prefetched: three queries whatever the number of racks."""
    racks: dict[int, list[str]] = {}
    for name, rack_team, row_team, site_team in (
        Rack.objects.filter(pk__in=set(rack_ids))
        .order_by("name")
        .values_list("name", "team_id", "row__team_id", "row__room__site__team_id")
    ):
        tid = rack_team or row_team or site_team
        if tid:
            racks.setdefault(tid, []).append(name)
    if not racks:
        return []
    order = list(racks)  # the teams in the order of their first rack's name
    teams = sorted(
        Team.objects.filter(pk__in=order).prefetch_related("members"), key=lambda t: order.index(t.pk)
    )
    return [Responsible(team=t, racks=tuple(racks[t.pk])) for t in teams]


def cable_teams(*, cable) -> list[Responsible]:
    """Teams responsible for the racks a cable's active ends sit in."""
    rack_ids = set()
    for port_rack, cage_rack in CableEnd.objects.filter(cable=cable).values_list(
        "port__device__rack_id", "cage__device__rack_id"
    ):
        rack_ids.update(r for r in (port_rack, cage_rack) if r)
    return rack_teams(rack_ids=rack_ids)


def team_addressees(responsible: list[Responsible]) -> list[Addressee]:
    """The team mailboxes and every active member with an address, once each (the first team
    that names an address gives its reason), in a stable order."""
    out: dict[str, Addressee] = {}
    for r in responsible:
        team = r.team
        candidates = [team.email] + [
            m.email for m in sorted(team.members.all(), key=lambda u: u.pk) if m.is_active
        ]
        for addr in candidates:
            if addr and addr.lower() not in out:
                out[addr.lower()] = Addressee(address=addr, reason=r.reason)
    return list(out.values())


def _scope_words(team: Team) -> str:
    """What a team looks after, as assigned: "site DC1, row B and racks R01, R02, R03 and 5
    more" (at most three names of each level, then how many more)."""
    parts = []
    for what, model in (("site", Site), ("row", Row), ("rack", Rack)):
        names = list(model.objects.filter(team=team).order_by("name").values_list("name", flat=True))
        if names:
            shown = names[:3] + ([f"{len(names) - 3} more"] if len(names) > 3 else [])
            parts.append(f"{what}{'s' if len(names) > 1 else ''} {and_list(shown)}")
    return and_list(parts)


def address_teams(*, address: str, escalated: bool) -> tuple[list[Addressee], list[str]]:
    """Why ``address`` gets a retest digest: each team whose mailbox it is or that it is an
    active member of (with what the team looks after), and, when the digest holds escalations,
    each team it leads. Returns those reasons and the names of the teams it leads."""
    member = Team.objects.filter(email__iexact=address) | Team.objects.filter(
        members__email__iexact=address, members__is_active=True
    )
    reasons = []
    for team in member.distinct().order_by("name"):
        scope = _scope_words(team)
        reasons.append(
            Addressee(address, f"are on team {team.name}" + (f", which looks after {scope}" if scope else ""))
        )
    led = list(
        Team.objects.filter(lead__email__iexact=address).order_by("name").values_list("name", flat=True)
    )
    if escalated:
        reasons += [
            Addressee(address, f"lead team {name}, and its retests overdue too long are escalated to you")
            for name in led
        ]
    return reasons, led
