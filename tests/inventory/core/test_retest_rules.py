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
