"""The NetBox import's report: one ``Change`` per object met, gathered in a ``NetboxPlan``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Change:
    kind: str
    key: str
    action: str  # create | change | unchanged | conflict | skip
    detail: str | dict = ""


@dataclass
class NetboxPlan:
    source: str
    site: str
    dry_run: bool
    changes: list[Change] = field(default_factory=list)

    @property
    def conflicts(self) -> list[Change]:
        return [c for c in self.changes if c.action == "conflict"]

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            out.setdefault(c.kind, {}).setdefault(c.action, 0)
            out[c.kind][c.action] += 1
        return out

    def as_dict(self) -> dict:
        return {
            "source": self.source,
            "site": self.site,
            "dry_run": self.dry_run,
            "summary": self.summary(),
            "changes": [c.__dict__ for c in self.changes if c.action != "unchanged"],
            "conflicts": [c.__dict__ for c in self.conflicts],
        }
