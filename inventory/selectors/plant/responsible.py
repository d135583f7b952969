"""Who is responsible for a cable: the team of the rack at each end (else its row, else its site)."""

from __future__ import annotations

from inventory.models import CableEnd, Rack, Team


def cable_teams(*, cable) -> list[Team]:
    """Teams responsible for the racks a cable's active ends sit in (nearest level wins per rack)."""
    rack_ids = set()
    for port_rack, cage_rack in CableEnd.objects.filter(cable=cable).values_list(
        "port__device__rack_id", "cage__device__rack_id"
    ):
        rack_ids.update(r for r in (port_rack, cage_rack) if r)
    team_ids = []
    for rack_team, row_team, site_team in Rack.objects.filter(pk__in=rack_ids).values_list(
        "team_id", "row__team_id", "row__room__site__team_id"
    ):
        tid = rack_team or row_team or site_team
        if tid and tid not in team_ids:
            team_ids.append(tid)
    return list(Team.objects.filter(pk__in=team_ids).prefetch_related("members"))


def team_addresses(teams: list[Team]) -> list[str]:
    """The team mailboxes and every active member with an address, once each, in a stable order."""
    out: list[str] = []
    for team in teams:
        candidates = [team.email] + [
            m.email for m in sorted(team.members.all(), key=lambda u: u.pk) if m.is_active
        ]
        for addr in candidates:
            if addr and addr.lower() not in {a.lower() for a in out}:
                out.append(addr)
    return out
