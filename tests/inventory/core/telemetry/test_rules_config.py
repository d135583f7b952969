"""Rule thresholds from settings (pure, no database): presets, overrides, the profile each link
class or PMD gets, and how long a repaired part's alert watches before it may resolve."""

import pytest

from inventory.core.telemetry.rules.config import (
    PRESETS,
    RuleConfig,
    Thresholds,
    clean_window_s,
    thresholds_from,
)


def test_a_preset_by_name_and_without_overrides_is_that_preset():
    assert thresholds_from("seed") is PRESETS["seed"]
    assert thresholds_from("default", {}) is PRESETS["default"]
    own = Thresholds(clear_s=60.0)
    assert thresholds_from(own, None) is own


def test_overrides_change_only_the_fields_they_name():
    t = thresholds_from("seed", {"clear_s": 120.0, "rx_drift_db": None})
    assert (t.clear_s, t.rx_drift_db) == (120.0, None)
    assert t.fec_mode == "cw_rate" and t.fec_cw_rate_floor == 0.001  # the rest of the seed's
    assert PRESETS["seed"].clear_s == 900.0  # the preset itself is untouched


def test_a_preset_named_among_the_overrides_replaces_the_base():
    t = thresholds_from("default", {"preset": "seed", "fec_hold_s": 300.0})
    assert t == Thresholds(**{**PRESETS["seed"].__dict__, "fec_hold_s": 300.0})


def test_unknown_presets_and_names_are_refused_with_what_is_known():
    with pytest.raises(ValueError) as preset:
        thresholds_from("strict")
    assert str(preset.value) == "Unknown rule preset 'strict'; known: default, seed"
    with pytest.raises(ValueError) as names:
        thresholds_from("default", {"tail_min": 1, "fec_hold": 5, "clear_s": 1.0})
    assert str(names.value) == "Unknown rule thresholds: fec_hold, tail_min"


def test_settings_give_each_link_class_and_pmd_its_profile_on_top_of_the_default():
    cfg = RuleConfig.from_dict(
        {
            "preset": "default",
            "overrides": {"clear_s": 600.0},
            "by_class": {"rail": {"fec_hold_s": 300.0}},
            "by_pmd": {"400GBASE-DR4": {"rx_drift_db": 3.0}, "400GBASE-SR8": {}},
        }
    )
    assert cfg.default == Thresholds(clear_s=600.0)
    assert cfg.by_class == {"rail": Thresholds(clear_s=600.0, fec_hold_s=300.0)}
    assert cfg.by_pmd == {
        "400GBASE-DR4": Thresholds(clear_s=600.0, rx_drift_db=3.0),
        "400GBASE-SR8": Thresholds(clear_s=600.0),
    }
    profiles = cfg.profiles()
    # the default first; a profile equal to one already listed (SR8's) is not listed twice
    assert profiles == [cfg.default, cfg.by_class["rail"], cfg.by_pmd["400GBASE-DR4"]]

    def index(link_class, pmd):
        return cfg.profile_index(link_class=link_class, pmd=pmd, profiles=profiles)

    assert index("rail", "400GBASE-DR4") == 1  # the class first
    assert index("leaf-spine", "400GBASE-DR4") == 2  # then the PMD
    assert index("leaf-spine", "400GBASE-SR8") == 0  # SR8's profile is the default's
    assert index("", "") == 0


def test_no_settings_is_the_default_preset():
    for raw in (None, {}):
        cfg = RuleConfig.from_dict(raw)
        assert (cfg.default, cfg.by_class, cfg.by_pmd) == (PRESETS["default"], {}, {})
        assert cfg.profiles() == [PRESETS["default"]]
    assert RuleConfig.from_dict({"preset": "seed"}).default is PRESETS["seed"]
    assert RuleConfig.from_dict({"by_class": None, "by_pmd": None}).profiles() == [PRESETS["default"]]


def test_a_repaired_parts_alert_watches_its_rules_window_and_at_least_the_clear_window():
    default = Thresholds()  # clear_s 900
    assert {
        rule: clean_window_s(rule, default)
        for rule in ("link_flap", "fec_degradation", "fec_tail", "rx_power_drift", "pfc_storm", "miswire")
    } == {
        "link_flap": 900.0,
        "fec_degradation": 900.0,  # its own 600 s, but never less than the 900 s clear window
        "fec_tail": 900.0,
        "rx_power_drift": 900.0,
        "pfc_storm": 900.0,
        "miswire": 900.0,  # no window of its own
    }
    short = Thresholds(clear_s=60.0, flap_window_s=1200.0, tail_window_s=1800.0)
    assert {
        rule: clean_window_s(rule, short)
        for rule in (
            "link_flap",
            "link_degraded",
            "fec_degradation",
            "fec_tail",
            "fec_uncorrectable",
            "rx_power_drift",
            "pfc_storm",
            "miswire",
        )
    } == {
        "link_flap": 1200.0,
        "link_degraded": 60.0,
        "fec_degradation": 600.0,
        "fec_tail": 1800.0,
        "fec_uncorrectable": 600.0,
        "rx_power_drift": 300.0,
        "pfc_storm": 600.0,  # the sustained window, the longest PFC one
        "miswire": 60.0,
    }
