"""One vocabulary: every code a page shows has human words, and dates read as people say them."""

from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from inventory.core import choices
from inventory.core.words import DOMAINS, human_date, human_reason, human_when, metres, verdict_tone, word
from tests.inventory.phone_checks import RAW_CODE


@pytest.mark.parametrize(
    ("code", "domain", "words"),
    [
        ("in_production", "", "In production"),
        ("SMF_OS2", "", "Single-mode OS2"),
        ("link_flap", "", "Link flap"),
        ("pre_fec_ber", "", "Pre-FEC BER"),
        ("unknown", "verdict", "Not evaluated"),
        ("failed", "placement_end", "Failed"),
        ("failed", "module_status", "Failed"),
        ("AB", "direction", "A to B"),
        ("some_new_rx_key", "", "Some new Rx key"),  # a code nobody named yet still reads as words
        ("gpu-0001", "", "gpu-0001"),  # names pass through untouched
        (None, "", ""),
    ],
)
def test_codes_read_as_words(code, domain, words):
    assert word(code, domain) == words


def test_every_choice_of_every_enumeration_a_page_shows_has_words():
    for enum in (
        choices.CableStatus,
        choices.CableKind,
        choices.AlertRule,
        choices.Verdict,
        choices.Severity,
    ):
        for value, label in enum.choices:
            assert word(value) == label
            assert "_" not in word(value)
    assert set(DOMAINS["status"]) == set(choices.CableStatus.values)


def test_an_unknown_verdict_is_never_green():
    assert verdict_tone("pass") == "ok" and verdict_tone("fail") == "bad"
    assert verdict_tone("unknown") == "none" and verdict_tone("anything") == "none"


def test_dates_read_as_people_say_them():
    today = date(2026, 12, 1)
    assert human_date(date(2026, 12, 1), today=today) == "today"
    assert human_date(date(2026, 11, 30), today=today) == "yesterday"
    assert human_date(date(2026, 3, 4), today=today) == "4 Mar"
    assert human_date(date(2025, 3, 4), today=today) == "4 Mar 2025"
    assert human_when(datetime(2026, 12, 1, 14, 5, tzinfo=UTC), today=today) == "today 14:05"
    assert human_when(datetime(2025, 9, 11, 9, 0, tzinfo=UTC)) == "11 Sep 2025 09:00"


@pytest.mark.parametrize(
    ("reason", "shown"),
    [
        ("seed_demo --gpus 256 --seed 1", "demo data loaded (256 GPUs, seed 1)"),
        ("olts test recorded: fail", "Power meter (OLTS) test recorded: fail"),
        ("alert fec_degradation #12: link flaps", "alert #12 (FEC degradation): link flaps"),
        ("via token ab12 (ci); otdr test recorded: pass", "via token ab12 (ci); OTDR test recorded: pass"),
        ("replaced by C0002", "replaced by C0002"),  # free text stays as written
    ],
)
def test_history_reasons_are_said_in_words(reason, shown):
    assert human_reason(reason) == shown
    assert not RAW_CODE.search(human_reason(reason))


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (Decimal("3.50"), "3.5 m"),
        (Decimal("4.00"), "4 m"),
        (4, "4 m"),
        (2.25, "2.25 m"),
        (Decimal("120"), "120 m"),
        (Decimal("0.505"), "0.51 m"),
        (None, ""),
    ],
)
def test_a_length_reads_as_written_not_padded(value, shown):
    """The desk list and the cable page said "3.50 m" beside "4 m"; both now say "3.5 m"."""
    assert metres(value) == shown
