"""Link rules (pure engine, no database): flaps counted in the flap window only, a link degraded
only below its recorded speed or width, and the keys such findings hold open.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2]--link 11--[row 3] ...
"""

from inventory.core.telemetry.rules.config import Thresholds
from inventory.core.telemetry.rules.engine import evaluate
from tests.inventory.core.telemetry.test_rules import fleet


def test_a_link_down_older_than_the_flap_window_is_no_flap():
    w, f, lt = fleet(1)
    five_minutes = [Thresholds(flap_window_s=300.0)]
    w.link_down[0, -8] = 1  # eight minutes ago
    w.error_recovery[1, -7] = 2
    assert evaluate(w, f, lt, five_minutes).findings == []
    w.link_down[0, -3] = 1  # three minutes ago
    assert [x.key for x in evaluate(w, f, lt, five_minutes).findings] == ["link_flap:link:10"]


def test_a_link_at_its_recorded_speed_and_width_is_not_degraded():
    w, f, lt = fleet(2)
    lt.expected_speed_gbps[:] = 400
    lt.expected_width[:] = 8
    w.speed_gbps[:] = 400
    w.link_width[:] = 8
    assert evaluate(w, f, lt).findings == []


def test_a_port_on_no_recorded_link_is_never_degraded():
    """A port on no link has no recorded speed: it is not compared with some link's."""
    w, f, lt = fleet(2)
    lt.a_row[1] = -1  # port 102 is on no recorded link
    lt.expected_speed_gbps[:] = 400
    w.speed_gbps[:] = 400
    w.speed_gbps[2] = 100
    assert evaluate(w, f, lt).findings == []


def test_flap_and_degraded_findings_hold_exactly_their_keys():
    w, f, lt = fleet(2)
    w.link_down[0, -2] = 1
    lt.expected_speed_gbps[:] = 400
    w.speed_gbps[:] = 400
    w.speed_gbps[3] = 200
    ev = evaluate(w, f, lt)
    assert [x.key for x in ev.findings] == ["link_degraded:link:11", "link_flap:link:10"]
    assert ev.holding == {"link_degraded:link:11", "link_flap:link:10"}
