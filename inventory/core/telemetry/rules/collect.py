"""Which link and end each window row is, and the findings grouped per link with the keys held open.

Hysteresis: an open alert stays open while its key is in ``holding``, i.e. while its condition
still shows in the clear window even if it no longer meets the opening bar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inventory.core.telemetry.rules.config import FEC_LIMITS, PHYSICAL_RULES, SEVERITY_ORDER
from inventory.core.telemetry.rules.frames import Finding, LinkTable, PortWindow
from inventory.core.telemetry.rules.words import describe


@dataclass
class RowMap:
    """Per window row: its link's profile and FEC limit, its link (index, -1: none) and end."""

    profile: np.ndarray  # int64[N], index into the profiles list
    limit: np.ndarray  # float[N], pre-FEC BER limit of the link's FEC
    link: np.ndarray  # int64[N], index into the link table (-1: on no link)
    side: np.ndarray  # int8[N], 0 = a, 1 = b
    passive: np.ndarray  # bool[N], on a passive copper link


def row_map(window: PortWindow, links: LinkTable) -> RowMap:
    """Each row takes its link's profile and FEC limit (ports on no link: the default)."""
    n = window.n
    row_profile = np.zeros(n, dtype=np.int64)
    row_limit = np.full(n, FEC_LIMITS["RS544"][0])
    row_link = np.full(n, -1, dtype=np.int64)  # index into the link table
    row_side = np.zeros(n, dtype=np.int8)  # 0 = a, 1 = b
    limits = np.array([FEC_LIMITS.get(f, FEC_LIMITS["RS544"])[0] for f in links.fec])
    m = links.link_id.shape[0]
    link_idx = np.arange(m)
    for side, rows in ((0, links.a_row), (1, links.b_row)):
        ok = rows >= 0
        row_profile[rows[ok]] = links.profile[ok]
        row_limit[rows[ok]] = limits[ok]
        row_link[rows[ok]] = link_idx[ok]
        row_side[rows[ok]] = side
    passive = np.zeros(n, bool)
    on_link = row_link >= 0
    passive[on_link] = links.passive_copper[row_link[on_link]]
    return RowMap(profile=row_profile, limit=row_limit, link=row_link, side=row_side, passive=passive)


class Collector:
    """Findings keyed per link (per port when the row is on no link), and the keys that hold."""

    def __init__(self, window: PortWindow, links: LinkTable, rows: RowMap):
        self.window = window
        self.links = links
        self.rows = rows
        self.grouped: dict[str, Finding] = {}
        self.holding: set[str] = set()

    def key_of(self, rule: str, row: int) -> tuple[str, int | None]:
        li = self.rows.link[row]
        if li >= 0:
            return f"{rule}:link:{int(self.links.link_id[li])}", int(self.links.link_id[li])
        return f"{rule}:port:{int(self.window.port_id[row])}", None

    def port_key(self, rule: str, row: int) -> str:
        """The key of a per-port finding (PFC, wiring, swaps), whatever link the row is on."""
        return f"{rule}:port:{int(self.window.port_id[row])}"

    def link_id_of(self, row: int) -> int | None:
        li = self.rows.link[row]
        return int(self.links.link_id[li]) if li >= 0 else None

    def side_name(self, row: int) -> str:
        return "port" if self.rows.link[row] < 0 else ("a" if self.rows.side[row] == 0 else "b")

    def add(self, rule: str, row: int, severity: str, end_evidence: dict) -> None:
        """One end's evidence for a rule, merged into its link's finding (highest severity wins)."""
        key, link_id = self.key_of(rule, row)
        f = self.grouped.get(key)
        if f is None:
            f = Finding(
                key=key,
                rule=rule,
                severity=severity,
                link_id=link_id,
                port_id=int(self.window.port_id[row]),
                headline="",
                recommendation="",
                recommendation_code="",
            )
            self.grouped[key] = f
        elif SEVERITY_ORDER[severity] > SEVERITY_ORDER[f.severity]:
            f.severity = severity
        f.ends[self.side_name(row)] = {"port_id": int(self.window.port_id[row]), **end_evidence}

    def hold(self, rule: str, rows: np.ndarray) -> None:
        """Keep the rule's key open for every row where ``rows`` is true."""
        for r in np.nonzero(rows)[0]:
            self.holding.add(self.key_of(rule, int(r))[0])

    def finish(self, has_data: np.ndarray) -> list[Finding]:
        """Which ends report, the words, and every finding's key held; sorted by key."""
        links = self.links
        findings: list[Finding] = []
        link_pos = {int(lid): i for i, lid in enumerate(links.link_id)} if self.grouped else {}
        for f in self.grouped.values():
            if f.link_id is not None and f.rule in PHYSICAL_RULES:
                li = link_pos[f.link_id]
                f.evidence["reporting"] = {
                    s: bool(row >= 0 and has_data[row])
                    for s, row in (("a", int(links.a_row[li])), ("b", int(links.b_row[li])))
                }
            if not f.headline:
                f.headline, f.recommendation, f.recommendation_code = describe(f)
            findings.append(f)
        self.holding |= {f.key for f in findings}
        return sorted(findings, key=lambda f: f.key)
