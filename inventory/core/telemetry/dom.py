"""Is a module's DOM reading believable? The one place that decides "sensor suspect".

A reading is suspect when it is outside what any pluggable module can physically report, or
when it contradicts the module's own judgement: beyond one of its own alarm thresholds while
the module itself reports that alarm's flag Off (SFF-8472, SFF-8636 and CMIS modules set the
flag from the same reading). A suspect reading is kept aside (the port shows "sensor suspect"
with the values and the reasons) and never reaches the stored gauges, so no baseline, rollup,
forecast or verdict is built on it.

Pure: no ORM. Takes anything with the sample's attributes.
"""

from __future__ import annotations

from typing import Any

# The module's own judgement: keys ``<quantity>_<level>`` of its thresholds and flags.
MODULE_QUANTITIES = ("temperature", "voltage", "bias", "tx_power", "rx_power")
MODULE_LEVELS = ("high_alarm", "low_alarm", "high_warn", "low_warn")
MODULE_KEYS = frozenset(f"{q}_{lvl}" for q in MODULE_QUANTITIES for lvl in MODULE_LEVELS)
# Every SFP/SFP+/SFP28/QSFP/QSFP-DD/OSFP form factor runs on 3.3 V (SFF-8419, SFF-8679, CMIS:
# 3.135-3.465 V); a module that answers its EEPROM at all is powered. Below 2.5 V or above
# 4.0 V the voltage monitor is not reading the supply.
SUPPLY_V = (2.5, 4.0)
# reading fields checked against the module's own alarm thresholds and flags
_QUANTITY_FIELDS = (
    ("temperature", "temperature_c"),
    ("voltage", "voltage_v"),
    ("bias", "bias_ma"),
    ("tx_power", "tx_power_dbm"),
    ("rx_power", "rx_power_dbm"),
)
DOM_FIELDS = ("temperature_c", "voltage_v", "bias_ma", "tx_power_dbm", "rx_power_dbm")


def _values(v: Any) -> list[float]:
    if v is None:
        return []
    if isinstance(v, (int, float)):
        return [float(v)]
    return [float(x) for x in v if x is not None]


def dom_suspect_reasons(s: Any) -> list[str]:
    """Why the sample's DOM reading cannot be believed ([] when it can)."""
    reasons: list[str] = []
    v = s.voltage_v
    if v is not None and not SUPPLY_V[0] <= v <= SUPPLY_V[1]:
        reasons.append(f"supply voltage {v:g} V: no module runs on it (3.3 V modules)")
    thresholds = s.module_thresholds or {}
    flags = s.module_flags or {}
    for quantity, field in _QUANTITY_FIELDS:
        high, low = thresholds.get(f"{quantity}_high_alarm"), thresholds.get(f"{quantity}_low_alarm")
        if high is None or low is None or high <= low:
            continue  # thresholds the module does not implement (all 0) judge nothing
        for value in _values(getattr(s, field)):
            if value > high and flags.get(f"{quantity}_high_alarm") is False:
                reasons.append(
                    f"{quantity.replace('_', ' ')} {value:g} above its own high alarm {high:g} "
                    "while the module reports that alarm Off"
                )
                break
            if value < low and flags.get(f"{quantity}_low_alarm") is False:
                reasons.append(
                    f"{quantity.replace('_', ' ')} {value:g} below its own low alarm {low:g} "
                    "while the module reports that alarm Off"
                )
                break
    return reasons
