"""Wiring rules: miswire (the reported neighbour is not the recorded far end) and unrecorded_swap
(the reported module serial is not the recorded one)."""

from __future__ import annotations

import numpy as np

from inventory.core.telemetry.rules.collect import Collector
from inventory.core.telemetry.rules.frames import Finding, PortFacts, PortWindow


def miswire_findings(out: Collector, window: PortWindow, facts: PortFacts) -> None:
    nb = window.neighbor_port_id
    exp = facts.expected_neighbor_port_id
    mis = (nb != -1) & (exp != -1) & (nb != exp)
    for r in np.nonzero(mis)[0]:
        r = int(r)
        key = out.port_key("miswire", r)
        out.grouped[key] = Finding(
            key=key,
            rule="miswire",
            severity="notify",
            link_id=out.link_id_of(r),
            port_id=int(window.port_id[r]),
            headline=f"sees {window.neighbor_label[r] or 'an unknown neighbour'}, "
            f"expected {facts.expected_neighbor_label[r] or 'the recorded far end'}",
            recommendation="Move the cable to the recorded port, or correct the record if the plan changed.",
            recommendation_code="fix_wiring",
            ends={
                out.side_name(r): {
                    "port_id": int(window.port_id[r]),
                    "expected_port_id": int(exp[r]),
                    "expected": facts.expected_neighbor_label[r],
                    "seen_port_id": int(nb[r]) if nb[r] >= 0 else None,
                    "seen": window.neighbor_label[r],
                }
            },
        )
        out.holding.add(key)


def unrecorded_swap_findings(out: Collector, window: PortWindow, facts: PortFacts) -> None:
    """The module (or sealed cable end) serial differs from the record."""
    for r in _serial_mismatch_rows(window.module_serial, facts.recorded_serial):
        key = out.port_key("unrecorded_swap", r)
        recorded = facts.recorded_serial[r]
        out.grouped[key] = Finding(
            key=key,
            rule="unrecorded_swap",
            severity="notify",
            link_id=out.link_id_of(r),
            port_id=int(window.port_id[r]),
            headline=f"reports module s/n {window.module_serial[r]}, recorded "
            f"{('s/n ' + recorded) if recorded else 'no module'}",
            recommendation="Record the module swap (or find who changed the module) so its history stays true.",
            recommendation_code="record_swap",
            ends={
                out.side_name(r): {
                    "port_id": int(window.port_id[r]),
                    "reported_serial": window.module_serial[r],
                    "recorded_serial": recorded,
                }
            },
        )
        out.holding.add(key)


def _serial_mismatch_rows(reported: list[str | None], recorded: list[str | None]) -> list[int]:
    """Rows whose reported serial differs from the recorded one (both already normalised)."""
    rep = np.asarray(reported, dtype=object)
    rec = np.asarray(recorded, dtype=object)
    candidates = np.nonzero((rep != None) & (rec != None) & (rep != rec))[0]  # noqa: E711 - elementwise
    return [int(i) for i in candidates if reported[i]]
