"""The reconciliation report's rows: module and neighbour rows, their statuses, the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

MODULE_STATUSES = ("missing_record", "swap", "not_seen", "ok")
NEIGHBOUR_STATUSES = ("miswire", "unrecorded", "no_neighbour", "ok")


def norm(s: str | None) -> str:
    """Identity strings compare trimmed and case-insensitively (EEPROMs pad with spaces)."""
    return (s or "").strip().upper()


@dataclass
class ModuleRow:
    key: str  # "cage:<id>": what the preview and apply steps name
    status: str
    site: str
    rack: str
    device: str
    position_u: int | None
    cage: str
    cage_id: int | None  # None: the port has no cage recorded
    form_factor: str
    ports: list[str]
    seen_vendor: str = ""
    seen_part: str = ""
    seen_serial: str = ""
    seen_at: datetime | None = None
    recorded_kind: str = "none"  # module | cable_end | none
    recorded_vendor: str = ""
    recorded_part: str = ""
    recorded_serial: str = ""
    transceiver_id: int | None = None
    cable_label: str = ""
    cable_side: str = ""
    # For missing records: the recorded module model that matches what is seen, or why not.
    model_id: int | None = None
    model_name: str = ""  # the model the record would use: "NVIDIA MMS4X00-NM (400GBASE-DR4)"
    problem: str = ""

    @property
    def creatable(self) -> bool:
        return self.status == "missing_record" and self.model_id is not None and not self.problem

    def as_dict(self) -> dict:
        return {
            "key": self.key,
            "status": self.status,
            "site": self.site,
            "rack": self.rack,
            "device": self.device,
            "cage": self.cage,
            "ports": self.ports,
            "seen": {
                "vendor": self.seen_vendor,
                "part": self.seen_part,
                "serial": self.seen_serial,
                "at": self.seen_at.isoformat() if self.seen_at else None,
            },
            "recorded": {
                "kind": self.recorded_kind,
                "vendor": self.recorded_vendor,
                "part": self.recorded_part,
                "serial": self.recorded_serial,
                "transceiver": self.transceiver_id,
                "cable": self.cable_label or None,
                "cable_side": self.cable_side or None,
            },
            "creatable": self.creatable,
            "model": self.model_id,
            "model_name": self.model_name,
            "problem": self.problem,
        }


@dataclass
class NeighbourRow:
    key: str  # "port:<id>"
    status: str
    site: str
    rack: str
    device: str
    position_u: int | None
    port: str
    expected: str | None
    seen: str | None
    seen_at: datetime | None = None
    cables: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "key": self.key,
            "status": self.status,
            "site": self.site,
            "rack": self.rack,
            "device": self.device,
            "port": self.port,
            "expected": self.expected,
            "seen": self.seen,
            "seen_at": self.seen_at.isoformat() if self.seen_at else None,
            "cables": self.cables,
        }


@dataclass
class Report:
    modules: list[ModuleRow]
    neighbours: list[NeighbourRow]
    generated_at: datetime
    # Rows that agree and were only counted (``include_ok=False``): status -> count.
    ok_modules: int = 0
    ok_neighbours: int = 0

    def counts(self) -> dict:
        out = {f"module_{s}": 0 for s in MODULE_STATUSES} | {f"neighbour_{s}": 0 for s in NEIGHBOUR_STATUSES}
        for r in self.modules:
            out[f"module_{r.status}"] += 1
        for r in self.neighbours:
            out[f"neighbour_{r.status}"] += 1
        out["module_ok"] += self.ok_modules
        out["neighbour_ok"] += self.ok_neighbours
        out["creatable"] = sum(1 for r in self.modules if r.creatable)
        return out

    def by_rack(self, *, include_ok: bool = False) -> list[dict]:
        """Rows grouped by (site, rack), racks in name order, devices top U down."""
        groups: dict[tuple[str, str], dict] = {}
        for r in self.modules:
            if include_ok or r.status != "ok":
                groups.setdefault(
                    (r.site, r.rack), {"site": r.site, "rack": r.rack, "modules": [], "neighbours": []}
                )["modules"].append(r)
        for r in self.neighbours:
            if include_ok or r.status != "ok":
                groups.setdefault(
                    (r.site, r.rack), {"site": r.site, "rack": r.rack, "modules": [], "neighbours": []}
                )["neighbours"].append(r)
        return [groups[k] for k in sorted(groups)]
