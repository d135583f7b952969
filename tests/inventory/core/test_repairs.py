"""The pure parts of repairs that learn: the symptom key, the one verdict, the ranking's words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from inventory.core import repairs as core

T = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
WINDOW = 900.0
HOLD = 3600.0


def _after(**kw) -> core.AlertAfter:
    base = {"state": "open", "resolved_at": None, "returned_at": None, "updated_at": T}
    return core.AlertAfter(**{**base, **kw})


def _verdict(now: datetime, **kw) -> core.Outcome:
    return core.repair_outcome(done_at=T, window_s=WINDOW, hold_s=HOLD, now=now, after=_after(**kw))


def test_the_symptom_key_reads_direction_receive_power_and_the_modules_own_flags():
    one = {"ends": {"b": {"metric": "pre_fec_ber"}}}
    assert core.symptom_key(evidence=one, rule="fec_degradation", flags=[None, {}]) == ("one", "b")
    both = {"ends": {"a": {}, "b": {"below_module_warning": True}}}
    flags = [{"bias_high_warn": True}, {"temperature_high_alarm": True, "rx_power_low_warn": False}]
    assert core.symptom_key(evidence=both, rule="fec_tail", flags=flags) == ("both+rx+bias+temp", "")
    assert core.symptom_key(evidence=one, rule="rx_power_drift", flags=[]) == ("one+rx", "b")


def test_fixed_only_once_the_alert_resolved_and_stayed_clean_for_the_hold():
    resolved = T + timedelta(minutes=16)
    assert _verdict(T + timedelta(minutes=10)).verdict == "pending"
    assert (
        _verdict(resolved + timedelta(minutes=30), state="resolved", resolved_at=resolved).verdict
        == "pending"
    )
    fixed = _verdict(resolved + timedelta(hours=2), state="resolved", resolved_at=resolved)
    assert (fixed.verdict, fixed.at) == ("fixed", resolved + timedelta(hours=1))
    # A recurrence after it was fixed is a new failure, not this repair's.
    later = _verdict(
        resolved + timedelta(hours=3),
        state="resolved",
        resolved_at=resolved,
        opened_again_at=resolved + timedelta(hours=2),
    )
    assert later.verdict == "fixed"


def test_came_back_at_the_first_sign_inside_the_hold():
    resolved = T + timedelta(minutes=16)
    back = _verdict(
        T + timedelta(hours=5),
        state="open",
        resolved_at=None,
        reopened=(resolved + timedelta(minutes=20),),
        next_repair_at=resolved + timedelta(minutes=40),
    )
    assert (back.verdict, back.at, back.reason) == (
        "came_back",
        resolved + timedelta(minutes=20),
        "the alert reopened",
    )
    # Never resolved and still seen after the clean window plus the hold: it did not fix it.
    still = _verdict(T + timedelta(hours=2), updated_at=T + timedelta(hours=2))
    assert still.verdict == "came_back" and still.at == T + timedelta(seconds=WINDOW + HOLD)
    # Open but silent (its ports stopped reporting): no verdict either way.
    assert _verdict(T + timedelta(hours=2), updated_at=T + timedelta(minutes=5)).verdict == "pending"
    # A "back" recorded before this repair (an earlier replacement's) is not this repair's.
    assert _verdict(T + timedelta(minutes=5), returned_at=T - timedelta(minutes=5)).verdict == "pending"


def test_the_recommendation_keeps_the_rules_words_until_outcomes_move_another_action_first():
    prior = core.prior_for(row="one_direction", symptoms="one")
    ranking = core.rank_actions(prior=prior, counts={}, scope="every repair on this rule", first="clean")
    assert core.recommendation_words(advice="Clean first.", ranking=ranking) == "Clean first."
    hot = core.prior_for(row="one_direction", symptoms="one+temp")
    ranking = core.rank_actions(prior=hot, counts={}, scope="every repair on this rule", first="clean")
    assert ranking.top.action == "swap_module" and ranking.moved
    words = core.recommendation_words(advice="Clean first.", ranking=ranking)
    assert words.startswith("Swap the module first: 60% expected first-time fix") and words.endswith(
        "Clean first."
    )
    sealed = {"modules": {"a": {"cable": "AOC-7"}, "b": {"cable": "AOC-7"}}}
    assert core.prior_row(advice_code="replace_cable", evidence=sealed) == "reseat"


def test_every_advice_the_rules_write_has_a_prior_whose_first_action_is_the_advices_own():
    """A rule's advice code with no prior row fell to "default", whose first action is "other":
    a slow collective's alert (advice: clean and re-seat) asked the technician for "Other, 50%"."""
    assert core.rule_first(core.prior_row(advice_code="clean_reseat", evidence={})) == "clean"
    assert core.rule_first(core.prior_row(advice_code="reseat", evidence={})) == "reseat"
    assert core.rule_first(core.prior_row(advice_code="check_host", evidence={})) == "other"


def test_the_symptoms_read_in_words():
    assert core.symptom_words("one+rx+bias") == "one direction, low receive power, high transmitter bias"
    assert core.symptom_words("both+temp") == "both directions, high temperature"
