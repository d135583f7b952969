"""The demo's per-fibre test results, computed as columns, are the rows a loop over each session
would write: same fibres, wavelengths, losses and verdicts, in the same order (pure, no database)."""

import random

from inventory.services.demo.builder import Rec
from inventory.services.demo.commissioning import _fibre_columns, _fibre_losses, _worst_loss, fibres_passed

WAVELENGTHS = [(1310,), (1310, 1550), (850, 1300)]


def _sessions(n: int, seed: int = 4):
    rng = random.Random(seed)
    results = []
    for i in range(n):
        # down to 0.0: the 0.05 dB floor is reached by the second window on some fibres
        losses = [round(rng.uniform(0.0, 1.8), 2) for _ in range(rng.choice([8, 24]))]
        results.append((Rec(pk=1000 + i, budget_db=rng.choice([1.5, 1.53])), losses, rng.choice(WAVELENGTHS)))
    return results


def test_the_columns_are_every_sessions_rows_in_order_with_edited_sessions_taking_their_own():
    results = _sessions(400)
    t, losses, wls = results[7]
    edited = {7: [(f, wl, round(x + 0.4, 2) if f == 3 else x) for f, wl, x in _fibre_losses(losses, wls)]}
    cols = _fibre_columns(results, edited)
    got = list(
        zip(
            *(cols[c].tolist() for c in ("session", "fibre", "wavelength_nm", "loss_db", "verdict")),
            strict=True,
        )
    )
    expected = [
        (i, f, wl, x, b"pass" if x <= t.budget_db else b"fail")
        for i, (t, losses, wls) in enumerate(results)
        for f, wl, x in edited.get(i, _fibre_losses(losses, wls))
    ]
    assert got == expected
    assert {v for *_, v in got} == {b"pass", b"fail"} and min(x for *_, x, _ in got) == 0.05
    passed = {}
    for i, f, _wl, _x, v in got:
        if v == b"pass":
            passed.setdefault(i, set()).add(f)
    assert fibres_passed(cols, len(results)).tolist() == [len(passed.get(i, ())) for i in range(len(results))]
    assert 0 < min(len(v) for v in passed.values()) < max(len(v) for v in passed.values())


def test_the_worst_loss_is_the_worst_row():
    for _, losses, wls in _sessions(400, seed=9):
        assert _worst_loss(losses) == max(x for _, _, x in _fibre_losses(losses, wls))
