"""Wiring rules (pure engine, no database): a port that sees another neighbour than its recorded
far end (miswire), and a module whose serial is not the recorded one (unrecorded_swap).

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2]--link 11--[row 3] ...
"""

from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import Finding
from tests.inventory.core.telemetry.test_rules_hold_and_windows import quiet_fleet

MOVE = "Move the cable to the recorded port, or correct the record if the plan changed."
RECORD = "Record the module swap (or find who changed the module) so its history stays true."


def miswire(port: int, link: int | None, side: str, headline: str, end: dict) -> Finding:
    return Finding(
        key=f"miswire:port:{port}",
        rule="miswire",
        severity="notify",
        link_id=link,
        port_id=port,
        headline=headline,
        recommendation=MOVE,
        recommendation_code="fix_wiring",
        ends={side: {"port_id": port, **end}},
    )


def test_a_port_that_sees_another_neighbour_is_a_miswire_naming_both():
    w, f, lt = quiet_fleet(3)
    f.expected_neighbor_label[:] = ["b0", "a0", "b1", "a1", None, "a2"]
    lt.a_row[2] = -1  # port 104 is on no recorded link (its far end is recorded, 105)
    w.neighbor_port_id[:] = [103, -2, 101, -1, 100, -2]
    w.neighbor_label[:] = ["a1", None, "b0", None, None, "x"]
    ev = evaluate(w, f, lt)
    assert ev.findings == [
        miswire(
            100,
            10,
            "a",
            "sees a1, expected b0",
            {"expected_port_id": 101, "expected": "b0", "seen_port_id": 103, "seen": "a1"},
        ),
        # reported, but not a port the plant knows (-2), with no name: an unknown neighbour
        miswire(
            101,
            10,
            "b",
            "sees an unknown neighbour, expected a0",
            {"expected_port_id": 100, "expected": "a0", "seen_port_id": None, "seen": None},
        ),
        miswire(
            102,
            11,
            "a",
            "sees b0, expected b1",
            {"expected_port_id": 103, "expected": "b1", "seen_port_id": 101, "seen": "b0"},
        ),
        # row 3 reports no neighbour (-1): nothing to compare
        miswire(
            104,
            None,
            "port",
            "sees an unknown neighbour, expected the recorded far end",
            {"expected_port_id": 105, "expected": None, "seen_port_id": 100, "seen": None},
        ),
        miswire(
            105,
            12,
            "b",
            "sees x, expected a2",
            {"expected_port_id": 104, "expected": "a2", "seen_port_id": None, "seen": "x"},
        ),
    ]
    assert ev.holding == {x.key for x in ev.findings}  # held open: exactly what was found


def test_the_recorded_neighbour_or_none_recorded_is_no_miswire():
    w, f, lt = quiet_fleet(2)
    w.neighbor_port_id[:] = [101, 100, 100, 101]  # rows 0, 1 see their far end
    f.expected_neighbor_port_id[2:] = -1  # rows 2, 3 have no far end recorded
    ev = evaluate(w, f, lt)
    assert ev.findings == []
    assert ev.holding == set()


def test_a_module_serial_not_the_recorded_one_is_an_unrecorded_swap():
    w, f, lt = quiet_fleet(3)
    lt.b_row[2] = -1  # port 105 is on no recorded link
    f.recorded_serial[:] = ["S0", "S1", "", "S3", None, "S5"]
    w.module_serial[:] = ["S0", "S9", "S2", "", "S4", "S6"]
    ev = evaluate(w, f, lt)
    assert ev.findings == [
        Finding(
            key="unrecorded_swap:port:101",
            rule="unrecorded_swap",
            severity="notify",
            link_id=10,
            port_id=101,
            headline="reports module s/n S9, recorded s/n S1",
            recommendation=RECORD,
            recommendation_code="record_swap",
            ends={"b": {"port_id": 101, "reported_serial": "S9", "recorded_serial": "S1"}},
        ),
        # nothing recorded in that cage ("")
        Finding(
            key="unrecorded_swap:port:102",
            rule="unrecorded_swap",
            severity="notify",
            link_id=11,
            port_id=102,
            headline="reports module s/n S2, recorded no module",
            recommendation=RECORD,
            recommendation_code="record_swap",
            ends={"a": {"port_id": 102, "reported_serial": "S2", "recorded_serial": ""}},
        ),
        # row 3 reports an empty serial, row 4's record is unknown (None): nothing to compare
        Finding(
            key="unrecorded_swap:port:105",
            rule="unrecorded_swap",
            severity="notify",
            link_id=None,
            port_id=105,
            headline="reports module s/n S6, recorded s/n S5",
            recommendation=RECORD,
            recommendation_code="record_swap",
            ends={"port": {"port_id": 105, "reported_serial": "S6", "recorded_serial": "S5"}},
        ),
    ]
    assert ev.holding == {x.key for x in ev.findings}  # held open: exactly what was found
