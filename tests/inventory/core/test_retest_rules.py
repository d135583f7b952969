"""The pure retest rules: no database."""

from datetime import UTC, date, datetime, timedelta

from inventory.core import retest_rules as r

D = r.Defaults(interval_days=90, shorten_days=7, new_install_days=0, remind_days=7)
DAY0_AT = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
DAY0 = DAY0_AT.date()


def facts(**kw):
    base = dict(
        cable_id=1,
        kind="SMF_OS2",
        status="in_production",
        live=True,
        install_date=date(2026, 1, 1),
    )
    base.update(kw)
    return r.CableFacts(**base)


def policy(**kw):
    return (
        r.PolicyResolver([], D).resolve(None, "SMF_OS2")
        if not kw
        else r.Policy(**{**vars(r.Policy(90, 7, False)), **kw})
    )


def test_due_is_the_last_pass_plus_the_interval():
    assert r.retest_due(facts(last_pass=DAY0), policy(), D, date(2026, 2, 1)) == date(2026, 4, 5)


def test_planned_and_retired_cables_have_no_due_date():
    assert r.retest_due(facts(status="planned"), policy(), D, date(2026, 2, 1)) is None
    assert r.retest_due(facts(status="retired", last_pass=DAY0), policy(), D, date(2026, 2, 1)) is None


def test_a_new_install_is_due_before_production():
    assert r.retest_due(facts(status="installed"), policy(), D, date(2026, 1, 2)) == date(2026, 1, 1)


def test_a_failure_after_the_pass_brings_it_forward_one_before_does_not():
    later_fail = DAY0_AT + timedelta(days=10)
    assert r.retest_due(facts(last_pass=DAY0, triggers=(later_fail,)), policy(), D, date(2026, 2, 1)) == date(
        2026, 1, 22
    )
    earlier_fail = DAY0_AT - timedelta(hours=1)  # failed, cleaned, passed: the pass counts
    assert r.retest_due(
        facts(last_pass=DAY0, last_pass_at=DAY0_AT, triggers=(earlier_fail,)), policy(), D, date(2026, 2, 1)
    ) == date(2026, 4, 5)


def test_the_most_specific_policy_wins_and_site_interval_sits_between():
    rules = [
        r.PolicyRule(kind="DAC", interval_days=180),
        r.PolicyRule(site_id=1, kind="DAC", interval_days=120, shorten_days=3),
        r.PolicyRule(link_class="spine", interval_days=30),
    ]
    res = r.PolicyResolver(rules, D, site_intervals={1: 60, 2: 45})
    assert res.resolve(1, "DAC").interval_days == 120
    assert res.resolve(1, "DAC").shorten_days == 3
    assert res.resolve(2, "DAC").interval_days == 45  # the site's own interval beats a medium-wide policy
    assert res.resolve(3, "DAC").interval_days == 180
    assert res.resolve(3, "SMF_OS2").interval_days == 90
    assert res.resolve(3, "SMF_OS2", ["spine", "leaf"]).interval_days == 30  # the strictest of its links


def test_telemetry_rolls_a_clean_live_link_forward_but_not_a_noisy_one():
    accept = r.Policy(interval_days=90, shorten_days=7, accept_telemetry=True)
    today = date(2026, 4, 1)  # within 7 days of the first due date (2026-04-05)
    clean = facts(last_pass=DAY0)
    assert r.retest_due(clean, accept, D, today) == date(2026, 7, 4)
    noisy = facts(last_pass=DAY0, alerts=(DAY0_AT + timedelta(days=40),))
    assert r.retest_due(noisy, accept, D, today) == date(2026, 4, 5)
    # An alert in the second interval does not undo the first one's acceptance.
    later = facts(last_pass=DAY0, alerts=(DAY0_AT + timedelta(days=120),))
    assert r.retest_due(later, accept, D, date(2026, 6, 30)) == date(2026, 7, 4)
    open_alert = facts(last_pass=DAY0, alert_open=True)
    assert r.retest_due(open_alert, accept, D, today) == date(2026, 4, 5)
    not_live = facts(last_pass=DAY0, status="tested", live=False)
    assert r.retest_due(not_live, accept, D, today) == date(2026, 4, 5)
    # Default: a physical retest is required.
    assert r.retest_due(clean, policy(), D, today) == date(2026, 4, 5)


def test_what_counts_as_a_retest_follows_the_medium():
    assert r.qualifying_test_kinds("SMF_OS2") == {"olts", "otdr"}
    assert r.qualifying_test_kinds("AOC") == {"qualification"}
    assert r.qualifying_test_kinds("CAT6A") is None


# --- edges found by mutation testing (make mutation): each test kills mutants that survived ------


def test_a_due_date_past_the_calendar_is_held_at_its_ends():
    assert r.add_days(date(9999, 12, 1), 90) == date.max
    assert r.add_days(date.max, 1) == date.max  # one day past the end is still the end
    assert r.add_days(date(1, 1, 5), -10) == date.min
    assert r.add_days(date(2026, 1, 1), 0) == date(2026, 1, 1)


def test_a_fault_on_a_cable_never_passed_brings_its_first_test_forward():
    d = r.Defaults(interval_days=90, shorten_days=7, new_install_days=30, remind_days=7)
    fresh = facts(status="installed", live=False)
    assert r.retest_due(fresh, policy(), d, DAY0) == date(2026, 1, 31)  # installed + 30 days
    faulted = facts(status="installed", live=False, triggers=(DAY0_AT,))
    assert r.retest_due(faulted, policy(), d, DAY0) == DAY0 + timedelta(days=7)


def test_a_trigger_at_the_very_moment_of_the_pass_does_not_shorten_it():
    same = facts(last_pass=DAY0, last_pass_at=DAY0_AT, triggers=(DAY0_AT,))
    assert r.retest_due(same, policy(), D, DAY0) == DAY0 + timedelta(days=90)
    after = facts(last_pass=DAY0, last_pass_at=DAY0_AT, triggers=(DAY0_AT + timedelta(seconds=1),))
    assert r.retest_due(after, policy(), D, DAY0) == DAY0 + timedelta(days=7)


def test_telemetry_rolls_forward_from_the_first_day_of_the_reminder_window():
    accept = r.Policy(interval_days=90, shorten_days=7, accept_telemetry=True)
    first_due = DAY0 + timedelta(days=90)
    on_the_edge = first_due - timedelta(days=D.remind_days)  # due == today + remind_days
    assert r.retest_due(facts(last_pass=DAY0), accept, D, on_the_edge) == first_due + timedelta(days=90)
    day_before = on_the_edge - timedelta(days=1)  # not in the window yet: nothing to roll
    assert r.retest_due(facts(last_pass=DAY0), accept, D, day_before) == first_due


def test_telemetry_rolls_a_one_day_interval_too():
    daily = r.Policy(interval_days=1, shorten_days=1, accept_telemetry=True)
    today = DAY0 + timedelta(days=10)
    # Rolled day by day past the reminder window's end (today + 7), not stuck at the first day.
    assert r.retest_due(facts(last_pass=DAY0), daily, D, today) == today + timedelta(days=8)


def test_an_alert_on_an_intervals_first_day_counts_against_it_and_on_its_last_does_not():
    accept = r.Policy(interval_days=90, shorten_days=7, accept_telemetry=True)
    today = date(2026, 4, 1)
    first_due = DAY0 + timedelta(days=90)
    at_start = facts(last_pass=DAY0, alerts=(DAY0_AT,))  # the interval's first day
    assert r.retest_due(at_start, accept, D, today) == first_due
    at_due = facts(last_pass=DAY0, alerts=(datetime.combine(first_due, DAY0_AT.time(), UTC),))
    assert r.retest_due(at_due, accept, D, today) == first_due + timedelta(days=90)


def test_a_trigger_on_the_day_of_a_pass_of_unknown_time_does_not_shorten_it():
    same_day = facts(last_pass=DAY0, last_pass_at=None, triggers=(DAY0_AT,))
    assert r.retest_due(same_day, policy(), D, DAY0) == DAY0 + timedelta(days=90)
    next_day = facts(last_pass=DAY0, last_pass_at=None, triggers=(DAY0_AT + timedelta(days=1),))
    assert r.retest_due(next_day, policy(), D, DAY0) == DAY0 + timedelta(days=8)


def test_telemetry_never_rolls_a_zero_interval_or_past_the_calendar():
    zero = r.Policy(interval_days=0, shorten_days=7, accept_telemetry=True)
    assert r.retest_due(facts(last_pass=DAY0), zero, D, DAY0) == DAY0  # due on the day of its pass
    accept = r.Policy(interval_days=90, shorten_days=7, accept_telemetry=True)
    near_the_end = facts(last_pass=date.max - timedelta(days=30))
    assert r.retest_due(near_the_end, accept, D, date.max - timedelta(days=3)) == date.max


def test_a_policy_rule_accepts_telemetry_for_its_scope_only():
    rules = [
        r.PolicyRule(kind="SMF_OS2", accept_telemetry=True),
        r.PolicyRule(site_id=7, kind="SMF_OS2", link_class="spine", interval_days=30),
    ]
    resolver = r.PolicyResolver(rules, D)
    assert resolver.resolve(None, "SMF_OS2").accept_telemetry is True
    assert resolver.resolve(None, "MMF_OM4").accept_telemetry is False  # the default
    assert resolver.uses_telemetry is True and r.PolicyResolver([], D).uses_telemetry is False
    # A cable on a spine link in site 7 takes that rule's interval; elsewhere the default.
    assert resolver.resolve(7, "SMF_OS2", ["spine", "leaf"]).interval_days == 30
    assert resolver.resolve(8, "SMF_OS2", ["spine"]).interval_days == 90
    assert resolver.resolve(7, "MMF_OM4", ["spine"]).interval_days == 90
    # Strictest of the links' classes: telemetry accepted only if every class accepts it.
    mixed = r.PolicyResolver([r.PolicyRule(link_class="leaf", accept_telemetry=True)], D)
    assert mixed.resolve(None, "SMF_OS2", ["leaf"]).accept_telemetry is True
    assert mixed.resolve(None, "SMF_OS2", ["leaf", "spine"]).accept_telemetry is False
    # A site-wide default that accepts telemetry holds where no rule says otherwise.
    trusting = r.PolicyResolver(
        [r.PolicyRule(kind="MMF_OM4", accept_telemetry=False)], r.Defaults(accept_telemetry=True)
    )
    assert trusting.resolve(None, "SMF_OS2").accept_telemetry is True
    assert trusting.resolve(None, "MMF_OM4").accept_telemetry is False


def test_the_worklist_names_the_retest_each_medium_needs():
    assert r.retest_kind_label("SMF_OS2") == "OLTS/OTDR"
    assert r.retest_kind_label("MMF_OM4") == "OLTS/OTDR"
    assert r.retest_kind_label("AOC") == "link qualification"
    assert r.retest_kind_label("CAT6A") == "test"
