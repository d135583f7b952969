"""Rows to links and findings per link (pure engine, no database): each link's own FEC limit,
the passive-copper exemption kept to its own link, and one finding per link whose severity is
its worse end's.

Topology (as in ``test_rules``): links of two ports, rows 2i (A end) and 2i+1 (B end)::

    [row 0 / port 100 / A]--link 10--[row 1 / port 101 / B]    [row 2 / port 102]--link 11--[row 3 / port 103]
"""

import numpy as np
import pytest

from inventory.core.telemetry.rules.engine import evaluate
from tests.inventory.core.telemetry.test_rules import fleet


def test_each_link_is_judged_against_its_own_fecs_limit():
    """No baselines: a pre-FEC BER of 1e-5 on both links is past 10% of KR4's 5e-5 limit (link
    11) and well within KP4's 2.4e-4 (link 10)."""
    w, f, lt = fleet(2)
    f.base_ber[:] = np.nan
    lt.fec = ["RS544", "RS528"]
    w.corrected_bits[[0, 2], -12:] = 1e-5 * w.line_bits[[0, 2], -12:]
    (x,) = evaluate(w, f, lt).findings
    assert x.key == "fec_degradation:link:11"
    assert x.ends["a"]["fec_limit"] == pytest.approx(5e-5)


def test_a_link_whose_fec_is_unknown_is_judged_against_kp4():
    w, f, lt = fleet(1)
    f.base_ber[:] = np.nan
    lt.fec = ["FC"]  # FireCode: not in the table
    w.corrected_bits[0, -12:] = 3e-5 * w.line_bits[0, -12:]  # past 10% of 2.4e-4
    (x,) = evaluate(w, f, lt).findings
    assert x.key == "fec_degradation:link:10"
    assert x.ends["a"]["fec_limit"] == pytest.approx(2.4e-4)


def test_a_port_on_no_link_keeps_its_light_rule_beside_a_passive_copper_link():
    """Link 11 is a passive DAC (no optical power rule); port 100 is on no recorded link and
    loses 3 dB on lane 1: still an alert, keyed by the port."""
    w, f, lt = fleet(2)
    lt.a_row[0] = -1
    lt.passive_copper[:] = [False, True]
    w.rx_power_dbm[0, 0] = -5.0
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.link_id, x.port_id) == ("rx_power_drift:port:100", None, 100)


def test_one_finding_per_link_takes_its_worse_ends_severity():
    """Link 10: the A end's lane 1 is 2.5 dB under its baseline (notify), the B end's under
    the module's own -9 dBm warning (page): one alert, paging, first seen at port 100."""
    w, f, lt = fleet(1)
    w.rx_power_dbm[0, 0] = -4.5
    w.rx_power_dbm[1, 0] = -10.0
    (x,) = evaluate(w, f, lt).findings
    assert (x.key, x.severity, x.port_id) == ("rx_power_drift:link:10", "page", 100)
    assert set(x.ends) == {"a", "b"}
