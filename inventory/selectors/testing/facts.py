"""What the budgets and the production gate need to know: the testing settings, a cable's polish, fibres in use and component budget, and a link's channel limit."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from inventory.conf import app_settings
from inventory.core.choices import CableKind, ConnectorType
from inventory.core.optics import budgets
from inventory.models import Cable, CableEnd, Link


def date_floor() -> date:
    """``CABLETRACK_TEST_DATE_FLOOR``: the earliest day a test, or a cable's install date, may carry."""
    return date.fromisoformat(app_settings.test_date_floor)


def sor_max_bytes() -> int:
    return app_settings.sor_max_bytes


def loss_increase_db() -> float:
    return app_settings.loss_increase_db


def marginal_db() -> float:
    return app_settings.marginal_db


def otdr_min_length_m() -> float:
    return app_settings.otdr_min_length_m


def otdr_length_tolerance() -> tuple[float, float]:
    """(share of the length in %, leads in m) a trace's fibre end may differ by."""
    return app_settings.otdr_length_tolerance_pct, app_settings.otdr_leads_m


def retest_interval() -> timedelta:
    return timedelta(days=app_settings.retest_interval_days)


# --- cable facts the budgets need -------------------------------------------------------------


def cable_polish(cable: Cable, ends: Sequence[CableEnd] | None = None) -> str:
    ends = ends if ends is not None else list(cable.ends.all())
    return next((e.polish for e in ends if e.polish), "")


def fibres_in_use(cable: Cable, ends: Sequence[CableEnd] | None = None) -> int:
    """How many fibres a power-meter test must cover: duplex LC 2, MPO-12 parallel optics 8
    (positions 1-4 and 9-12 carry light), other MPOs every fibre."""
    ends = ends if ends is not None else list(cable.ends.all())
    counts = [e.fibre_count for e in ends if e.fibre_count]
    types = {e.connector_type for e in ends}
    if ConnectorType.MPO in types and counts:
        n = max(counts)
        return 8 if n == 12 else n
    if ConnectorType.LC in types:
        return 2
    return max(counts) if counts else 1


def cable_component_budget(cable: Cable, wavelength_nm: int | None) -> budgets.ComponentBudget | None:
    """TIA-568.3 component budget of one installed cable: two mated pairs, its length."""
    if cable.kind not in CableKind.fibre() or not wavelength_nm:
        return None
    try:
        return budgets.tia_component_budget(
            fibre=cable.kind,
            wavelength_nm=int(wavelength_nm),
            length_m=float(cable.length_m or 0),
            connector_pairs=2,
        )
    except budgets.BudgetError:
        return None


def link_channel_limit(link: Link, fibre_kind: str) -> tuple[float | None, str]:
    """The PMD channel insertion-loss limit of a link, and where it comes from."""
    if link.loss_budget_db is not None:
        return link.loss_budget_db, f"{link.pmd or 'link'} budget recorded on the link"
    lim = budgets.pmd_limit(link.pmd, fibre_kind)
    if lim is None or lim.channel_il_db is None:
        return None, f"no published channel limit for {link.pmd or 'an unknown PMD'} on {fibre_kind}"
    return lim.channel_il_db, lim.source
