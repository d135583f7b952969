"""Alert rules over windowed port telemetry: pure, ORM-free, vectorised with numpy.

Input is columnar: a :class:`PortWindow` (one row per reporting port, one column per time
bucket, NaN where a bucket holds no data or a field is not reported), the static facts of the
ports (:class:`PortFacts`: recorded module serial, expected neighbour, baselines) and of the
links (:class:`LinkTable`: which rows are its two ends, its thresholds profile, FEC limit,
medium, tested loss). Output is a short list of :class:`Finding` plus the keys whose condition
still holds (hysteresis: an open alert stays open while its condition is present in the clear
window even if it no longer meets the opening bar).

Every rule is a handful of array operations over the whole fleet, so 100,000 ports take well
under a second; Python objects are built only for the few rows that fire.

Thresholds come from :class:`Thresholds` profiles, selected per link class or PMD by
:class:`RuleConfig`. ``PRESETS["default"]`` is what we recommend; ``PRESETS["seed"]`` keeps the
seed article's thresholds (FEC corrected rate > 0.001/s for 10 min, PFC > 100 pause frames/s
for 1 min or > 10/s sustained). README explains why the defaults differ.

Layout: ``config`` (FEC facts, severities, thresholds profiles and presets), ``frames`` (inputs
and outputs), ``fec`` / ``link`` / ``rx_power`` / ``pfc`` / ``wiring`` (each rule family's row
checks and findings), ``collect`` (rows to links, findings grouped per link, the keys held
open), ``words`` (headlines and recommendations) and ``engine`` (``evaluate``). This package
re-exports the engine's public face, which the alert service imports as ``engine``.
"""

from inventory.core.telemetry.rules.config import (
    FEC_LIMITS,
    PHYSICAL_RULES,
    PRESETS,
    SEVERITY_ORDER,
    RuleConfig,
    Thresholds,
    clean_window_s,
    thresholds_from,
)
from inventory.core.telemetry.rules.engine import evaluate
from inventory.core.telemetry.rules.frames import Evaluation, Finding, LinkTable, PortFacts, PortWindow
from inventory.core.telemetry.rules.util import tail_split
from inventory.core.telemetry.rules.words import describe

__all__ = [
    "FEC_LIMITS",
    "PHYSICAL_RULES",
    "clean_window_s",
    "PRESETS",
    "SEVERITY_ORDER",
    "Evaluation",
    "Finding",
    "LinkTable",
    "PortFacts",
    "PortWindow",
    "RuleConfig",
    "Thresholds",
    "describe",
    "evaluate",
    "tail_split",
    "thresholds_from",
]
