"""Loss budgets, verdicts and the trace heuristics. Pure code: no ORM, plain dataclasses.

Two budgets answer two different questions (a link can pass one and fail the other):

* The **PMD channel limit** (IEEE 802.3 / IBTA): the most insertion loss the optics tolerate
  over the whole channel, every cord, panel and trunk included.
* The **TIA-568.3 component method**: what one installed run (a trunk between panels) should
  lose given its connectors, splices and fibre length; it certifies the installation.

The tables below are data, each row citing where its number comes from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

PASS, MARGINAL, FAIL, UNKNOWN = "pass", "marginal", "fail", "unknown"
# "unknown" (no budget applies, or the trace was not judged) outranks pass and marginal: a session
# or link with an unjudged part never passes by the others passing; only a fail outranks it.
_RANK = {PASS: 1, MARGINAL: 2, UNKNOWN: 3, FAIL: 4}
DEFAULT_MARGINAL_DB = 0.3  # margin below this is "marginal": passes, but one dirty end from failing


@dataclass(frozen=True)
class PmdLimit:
    pmd: str
    fibre: str  # OS2 | OM3 | OM4 | OM5
    reach_m: int
    channel_il_db: float | None  # None: not published
    wavelength_nm: int
    fibres: int  # fibres in the channel (Tx + Rx)
    source: str


# --- PMD channel insertion-loss limits ----------------------------------------------------------
_P = PmdLimit
PMD_LIMITS: tuple[PmdLimit, ...] = (
    _P("100GBASE-SR4", "OM3", 70, 1.8, 850, 8, "IEEE 802.3-2022 Table 95-7 (OM3 70 m, 1.8 dB)"),
    _P("100GBASE-SR4", "OM4", 100, 1.9, 850, 8, "IEEE 802.3-2022 Table 95-7 (OM4 100 m, 1.9 dB)"),
    _P("100GBASE-DR", "OS2", 500, 3.0, 1310, 2, "IEEE 802.3-2022 Table 140-11 (500 m, 3.0 dB)"),
    _P("400GBASE-SR8", "OM3", 70, 1.8, 850, 16, "IEEE 802.3-2022 Table 138-11 (OM3 70 m, 1.8 dB)"),
    _P("400GBASE-SR8", "OM4", 100, 1.9, 850, 16, "IEEE 802.3-2022 Table 138-11 (OM4 100 m, 1.9 dB)"),
    _P("400GBASE-SR8", "OM5", 100, 1.9, 850, 16, "IEEE 802.3-2022 Table 138-11 (OM5 100 m, 1.9 dB)"),
    _P("400GBASE-SR4.2", "OM3", 70, 1.7, 850, 8, "IEEE 802.3cm-2020 Table 150-6 (OM3 70 m)"),
    _P("400GBASE-SR4.2", "OM4", 100, 1.8, 850, 8, "IEEE 802.3cm-2020 Table 150-6 (OM4 100 m)"),
    _P("400GBASE-SR4.2", "OM5", 150, 2.0, 850, 8, "IEEE 802.3cm-2020 Table 150-6 (OM5 150 m)"),
    _P("400GBASE-DR4", "OS2", 500, 3.0, 1310, 8, "IEEE 802.3bs-2017 Table 124-8 (500 m, 3.0 dB)"),
    _P("400GBASE-FR4", "OS2", 2000, 4.0, 1310, 2, "IEEE 802.3cu-2021 Table 151-8 (2 km, 4.0 dB)"),
    _P("800GBASE-DR8", "OS2", 500, 3.0, 1310, 16, "IEEE 802.3df-2024 Table 124-8 (DR8 500 m, 3.0 dB)"),
    _P("800GBASE-SR8", "OM3", 60, 1.8, 850, 16, "IEEE 802.3df-2024 Table 167-9 (OM3 60 m, 1.8 dB)"),
    _P("800GBASE-SR8", "OM4", 100, 1.9, 850, 16, "IEEE 802.3df-2024 Table 167-9 (OM4 100 m, 1.9 dB)"),
    _P("800GBASE-SR8", "OM5", 100, 1.9, 850, 16, "IEEE 802.3df-2024 Table 167-9 (OM5 100 m, 1.9 dB)"),
    _P("800G-2xDR4", "OS2", 500, 3.0, 1310, 8, "Two 400GBASE-DR4 channels: IEEE 802.3bs Table 124-8"),
    _P("800G-2xFR4", "OS2", 2000, 4.0, 1310, 2, "Two 400GBASE-FR4 channels: IEEE 802.3cu Table 151-8"),
    _P("HDR-SR4", "OM3", 70, 1.8, 850, 8, "IBTA Vol 2 HDR refers to 200GBASE-SR4: IEEE 802.3cd Table 138-11"),
    _P(
        "HDR-SR4", "OM4", 100, 1.9, 850, 8, "IBTA Vol 2 HDR refers to 200GBASE-SR4: IEEE 802.3cd Table 138-11"
    ),
    _P("NDR-DR4", "OS2", 500, 3.0, 1310, 8, "NVIDIA MMS4X00-NM datasheet (500 m); optics are 400GBASE-DR4"),
    _P(
        "NDR-SR4",
        "OM4",
        50,
        None,
        850,
        8,
        "NVIDIA MMA4Z00-NS datasheet gives 50 m OM4; no channel IL published",
    ),
    _P(
        "NDR-SR4",
        "OM3",
        30,
        None,
        850,
        8,
        "NVIDIA MMA4Z00-NS datasheet gives 30 m OM3; no channel IL published",
    ),
)
PMD_ALIASES = {
    "2x400GBASE-DR4": "800G-2xDR4",
    "800GBASE-2xDR4": "800G-2xDR4",
    "2x400GBASE-FR4": "800G-2xFR4",
    "800GBASE-2xFR4": "800G-2xFR4",
    "NDR": "NDR-DR4",
    "HDR": "HDR-SR4",
    "200GBASE-SR4": "HDR-SR4",  # the same optics: IEEE 802.3cd Table 138-11
}

# --- TIA-568.3-D component method -------------------------------------------------------------
TIA_CONNECTOR_PAIR_DB = 0.75  # TIA-568.3-D 7.3.1: max loss of a mated connector pair
TIA_SPLICE_DB = 0.3  # TIA-568.3-D 7.3.2: max loss of a splice
# Max cabled fibre attenuation, dB/km, by fibre and wavelength (TIA-568.3-D Table 3;
# OM5 953 nm from TIA-492AAAE; OS2 is the outside-plant / OS2 row, 0.5 dB/km).
FIBRE_DB_PER_KM: dict[tuple[str, int], float] = {
    ("OM3", 850): 3.5,
    ("OM3", 1300): 1.5,
    ("OM4", 850): 3.5,
    ("OM4", 1300): 1.5,
    ("OM5", 850): 3.5,
    ("OM5", 953): 3.0,
    ("OM5", 1300): 1.5,
    ("OS2", 1310): 0.5,
    ("OS2", 1383): 0.5,
    ("OS2", 1490): 0.5,  # TIA lists 1310/1383/1550 only; ITU-T G.652.D caps cabled fibre at
    ("OS2", 1550): 0.5,  # 0.40 dB/km over the whole 1310-1625 nm range, so the OS2 row holds at
    ("OS2", 1625): 0.5,  # 1490 and 1625 nm. 1650 nm (monitoring) has no published limit: not judged.
}
ATTENUATION_WAVELENGTH_SLACK_NM = 10  # 1302 nm is the 1300 nm row; 1650 is not the 1625 nm one
FIBRE_OF_KIND = {"SMF_OS2": "OS2", "MMF_OM3": "OM3", "MMF_OM4": "OM4", "MMF_OM5": "OM5"}

# --- Reflectance limits by polish -----------------------------------------------------------
UPC_FAIL_ABOVE_DB = -35.0  # UPC connector reflectance worse than -35 dB fails (TIA-568.3-D 7.3.1)
APC_WARN_ABOVE_DB = -55.0  # APC should reach -65 dB; above -55 dB something is wrong (IEC 61753-1 grade)

BEND_DELTA_DB = 0.1  # a non-reflective loss this much larger at 1550 nm than at 1310 nm
EVENT_MATCH_M = 0.5  # two traces' events this close (or 0.5% of the distance) are the same event
EVENT_MATCH_REL = 0.005
NEW_EVENT_MIN_LOSS_DB = 0.1


class BudgetError(ValueError):
    pass


def pmd_key(pmd: str) -> str:
    p = (pmd or "").strip().upper().replace(" ", "")
    for alias, target in PMD_ALIASES.items():
        if p == alias.upper():
            return target
    return next((lim.pmd for lim in PMD_LIMITS if lim.pmd.upper() == p), p)


def pmd_limit(pmd: str, fibre: str) -> PmdLimit | None:
    """The channel limit of ``pmd`` on ``fibre`` (OS2/OM3/OM4/OM5, or a CableKind value)."""
    key = pmd_key(pmd)
    fibre = FIBRE_OF_KIND.get(fibre, fibre)
    rows = [lim for lim in PMD_LIMITS if lim.pmd == key]
    exact = next((lim for lim in rows if lim.fibre == fibre), None)
    if exact:
        return exact
    if len({r.fibre for r in rows}) == 1 and rows and rows[0].fibre == "OS2" and fibre in ("", "OS2"):
        return rows[0]
    return None


def fibre_attenuation(fibre: str, wavelength_nm: int) -> float:
    fibre = FIBRE_OF_KIND.get(fibre, fibre)
    known = [wl for (f, wl) in FIBRE_DB_PER_KM if f == fibre]
    if not known:
        raise BudgetError(f"No TIA-568.3 attenuation for fibre {fibre!r}.")
    nearest = min(known, key=lambda wl: abs(wl - wavelength_nm))
    if abs(nearest - wavelength_nm) > ATTENUATION_WAVELENGTH_SLACK_NM:
        raise BudgetError(f"No published attenuation limit for {fibre} at {wavelength_nm} nm.")
    return FIBRE_DB_PER_KM[(fibre, nearest)]


@dataclass(frozen=True)
class ComponentBudget:
    connector_pairs: int
    splices: int
    length_m: float
    fibre: str
    wavelength_nm: int
    budget_db: float
    breakdown: str


def tia_component_budget(
    *, fibre: str, wavelength_nm: int, length_m: float, connector_pairs: int = 2, splices: int = 0
) -> ComponentBudget:
    """TIA-568.3-D component method: pairs x 0.75 + splices x 0.3 + km x attenuation."""
    if length_m < 0 or connector_pairs < 0 or splices < 0:
        raise BudgetError("Length, connector pairs and splices cannot be negative.")
    att = fibre_attenuation(fibre, wavelength_nm)
    fibre_db = att * length_m / 1000.0
    total = connector_pairs * TIA_CONNECTOR_PAIR_DB + splices * TIA_SPLICE_DB + fibre_db
    return ComponentBudget(
        connector_pairs,
        splices,
        length_m,
        FIBRE_OF_KIND.get(fibre, fibre),
        wavelength_nm,
        round(total, 4),
        f"{connector_pairs} x {TIA_CONNECTOR_PAIR_DB} dB pairs + {splices} x {TIA_SPLICE_DB} dB splices "
        f"+ {length_m / 1000:.3f} km x {att} dB/km",
    )


@dataclass(frozen=True)
class Verdict:
    verdict: str
    margin_db: float | None
    loss_db: float | None
    budget_db: float | None
    reason: str = ""


def verdict_for(
    loss_db: float | None, budget_db: float | None, *, marginal_db: float = DEFAULT_MARGINAL_DB
) -> Verdict:
    """Pass / marginal / fail by margin (budget - loss)."""
    if loss_db is None or budget_db is None:
        return Verdict(UNKNOWN, None, loss_db, budget_db, "no budget" if budget_db is None else "no loss")
    margin = round(budget_db - loss_db, 3)
    if margin < 0:
        v = FAIL
    elif margin < marginal_db:
        v = MARGINAL
    else:
        v = PASS
    return Verdict(v, margin, loss_db, budget_db)


def judged(verdict: str) -> bool:
    """Was it judged: pass, marginal or fail? "unknown" is not (no budget applied, no loss to
    judge, or the trace was not of this cable). A session's verdict is the worst of its judged
    traces; the others are counted beside it (``services.testing.otdr``)."""
    return verdict in (PASS, MARGINAL, FAIL)


def worst(verdicts: Iterable[str]) -> str:
    """The worst of several verdicts (a multi-fibre link is its worst fibre).

    Fail beats everything; then unknown, so "unknown" plus "marginal" is unknown, never a pass.
    No verdicts at all is unknown."""
    out = None
    for v in verdicts:
        if out is None or _RANK.get(v, _RANK[UNKNOWN]) > _RANK[out]:
            out = v if v in _RANK else UNKNOWN
    return out or UNKNOWN


@dataclass(frozen=True)
class FibreLoss:
    fibre: int
    wavelength_nm: int
    loss_db: float
    direction: str = "AB"
    reflectance_db: float | None = None


@dataclass
class SessionVerdict:
    verdict: str
    loss_db: float | None
    margin_db: float | None
    budget_db: float | None
    per_fibre: list[Verdict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def evaluate_fibres(
    fibres: Sequence[FibreLoss],
    *,
    budget_db: float | None,
    polish: str = "",
    marginal_db: float = DEFAULT_MARGINAL_DB,
) -> SessionVerdict:
    """Verdict of a test session: every fibre against the budget; the session is its worst fibre."""
    per = [verdict_for(f.loss_db, budget_db, marginal_db=marginal_db) for f in fibres]
    warnings: list[str] = []
    for f, v in zip(fibres, per, strict=True):
        if f.reflectance_db is not None:
            rv, msg = reflectance_verdict(f.reflectance_db, polish)
            if msg:
                warnings.append(f"fibre {f.fibre} @{f.wavelength_nm} nm: {msg}")
            if _RANK[rv] > _RANK[v.verdict]:
                per[per.index(v)] = Verdict(rv, v.margin_db, v.loss_db, v.budget_db, msg)
    warnings.extend(bend_from_olts(fibres))
    worst_loss = max((f.loss_db for f in fibres), default=None)
    margin = None if worst_loss is None or budget_db is None else round(budget_db - worst_loss, 3)
    return SessionVerdict(worst(v.verdict for v in per), worst_loss, margin, budget_db, per, warnings)


def reflectance_verdict(reflectance_db: float | None, polish: str) -> tuple[str, str]:
    """UPC fails above -35 dB; APC warns (marginal) above -55 dB."""
    if reflectance_db is None:
        return UNKNOWN, ""
    if polish == "APC":
        if reflectance_db > APC_WARN_ABOVE_DB:
            return MARGINAL, (
                f"reflectance {reflectance_db:.1f} dB is above the {APC_WARN_ABOVE_DB:.0f} dB an APC "
                "connector should reach: suspected dirty or damaged connector"
            )
        return PASS, ""
    if reflectance_db > UPC_FAIL_ABOVE_DB:
        return FAIL, (
            f"reflectance {reflectance_db:.1f} dB is above the {UPC_FAIL_ABOVE_DB:.0f} dB UPC limit: "
            "suspected dirty or damaged connector"
        )
    return PASS, ""


# --- trace heuristics -------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceEvent:
    """The fields of an OTDR event the heuristics need (see ``sor.SorEvent.as_dict``)."""

    distance_m: float
    kind: str
    loss_db: float | None
    reflectance_db: float | None

    @classmethod
    def from_dict(cls, d: dict) -> TraceEvent:
        return cls(float(d["distance_m"]), d.get("kind", ""), d.get("loss_db"), d.get("reflectance_db"))


@dataclass(frozen=True)
class Finding:
    kind: str  # bend | dirty_connector | new_event
    distance_m: float | None
    message: str


def same_place(a: float, b: float) -> bool:
    return abs(a - b) <= max(EVENT_MATCH_M, EVENT_MATCH_REL * max(abs(a), abs(b)))


def _within_fibre(events: Sequence[TraceEvent]) -> list[TraceEvent]:
    """Events up to the first end of fibre (ghosts and tails past it are ignored)."""
    out = []
    for e in events:
        out.append(e)
        if e.kind == "end":
            break
    return out


def dirty_connectors(events: Sequence[TraceEvent], *, polish: str = "") -> list[Finding]:
    """High reflectance on a connector (not the fibre end): suspected dirty or damaged connector."""
    found = []
    for e in _within_fibre(events):
        if e.kind == "end":
            continue
        saturated = e.kind == "saturated"
        verdict, msg = reflectance_verdict(e.reflectance_db, polish)
        if verdict in (FAIL, MARGINAL) or (saturated and e.reflectance_db is not None):
            found.append(
                Finding(
                    "dirty_connector",
                    e.distance_m,
                    f"Suspected dirty or damaged connector at {e.distance_m:.1f} m: "
                    + (msg or f"saturated reflection {e.reflectance_db:.1f} dB"),
                )
            )
    return found


def bends(events_1310: Sequence[TraceEvent], events_1550: Sequence[TraceEvent]) -> list[Finding]:
    """Single-mode: a loss event larger at 1550 nm than at 1310 nm by ``BEND_DELTA_DB`` is a bend."""
    found = []
    short = _within_fibre(events_1310)
    for e in _within_fibre(events_1550):
        if e.kind == "end" or e.loss_db is None:
            continue
        twin = min(short, key=lambda o: abs(o.distance_m - e.distance_m), default=None)
        base = twin.loss_db if twin and same_place(twin.distance_m, e.distance_m) else 0.0
        base = base or 0.0
        if e.loss_db - base >= BEND_DELTA_DB - 1e-9:  # 0.35 - 0.25 is 0.0999...98 in floats
            found.append(
                Finding(
                    "bend",
                    e.distance_m,
                    f"Suspected bend at {e.distance_m:.1f} m: {e.loss_db:.2f} dB at 1550 nm against "
                    f"{base:.2f} dB at 1310 nm.",
                )
            )
    return found


def bend_from_olts(fibres: Sequence[FibreLoss]) -> list[str]:
    """Power meter on single-mode: a fibre losing more at 1550 nm than at 1310 nm is likely bent."""
    by = {(f.fibre, f.direction, f.wavelength_nm): f.loss_db for f in fibres}
    out = []
    for (fibre, direction, wl), loss in sorted(by.items()):
        if wl != 1550:
            continue
        short = by.get((fibre, direction, 1310))
        if short is not None and loss - short >= BEND_DELTA_DB - 1e-9:
            out.append(
                f"fibre {fibre}: {loss:.2f} dB at 1550 nm against {short:.2f} dB at 1310 nm: suspected bend"
            )
    return out


def new_events(baseline: Sequence[TraceEvent], retest: Sequence[TraceEvent]) -> list[Finding]:
    """Events in ``retest`` that the baseline trace did not have."""
    base = _within_fibre(baseline)
    found = []
    for e in _within_fibre(retest):
        if e.kind == "end":
            continue
        if any(same_place(b.distance_m, e.distance_m) for b in base):
            continue
        significant = (e.loss_db or 0) >= NEW_EVENT_MIN_LOSS_DB or e.kind in ("reflective", "saturated")
        if significant:
            found.append(
                Finding(
                    "new_event",
                    e.distance_m,
                    f"New {e.kind} event at {e.distance_m:.1f} m"
                    + (f" ({e.loss_db:.2f} dB)" if e.loss_db is not None else "")
                    + " that the baseline trace did not have.",
                )
            )
    return found


def locate(distance_m: float, segments: Sequence[tuple[str, float | None, str]]) -> str:
    """Which segment of a path a distance falls in: ``segments`` = (cable label, length m, far end)."""
    start = 0.0
    for label, length, far in segments:
        if length is None:
            return f"in or after {label} (its length is not recorded)"
        if distance_m <= start + length:
            return f"in {label}, {distance_m - start:.1f} m from its start (before {far})"
        start += length
    return f"past the recorded path ({start:.1f} m)"
