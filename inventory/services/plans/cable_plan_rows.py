"""Cable-plan rows: one raw row read into typed values and checked on its own, and the results."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from inventory.core.choices import CableKind, CableRole, CableStatus, ConnectorType, Polarity, Polish
from inventory.core.validators import LABEL_RE, LABEL_RULE, is_whole_number
from inventory.models import Cable
from inventory.models.cables import MAX_LENGTH_M

TRUE = {"true", "yes", "1", "y", "pinned", "male"}
FALSE = {"false", "no", "0", "n", "unpinned", "female"}


@dataclass
class RowResult:
    row: int
    label: str
    action: str  # create | change | unchanged | error
    changes: dict = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass
class PlanResult:
    dry_run: bool
    applied: bool = False
    rows: list[RowResult] = field(default_factory=list)

    @property
    def errors(self) -> list[RowResult]:
        return [r for r in self.rows if r.errors]

    def summary(self) -> dict[str, int]:
        out = {"create": 0, "change": 0, "unchanged": 0, "error": 0}
        for r in self.rows:
            out[r.action] += 1
        return out

    def as_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "applied": self.applied,
            "summary": self.summary(),
            "rows": [
                {"row": r.row, "label": r.label, "action": r.action, "changes": r.changes, "errors": r.errors}
                for r in self.rows
            ],
        }


@dataclass
class PlanRow:
    """One parsed plan row: what ``cable_plan_import`` checks against the plant and writes."""

    n: int
    label: str
    kind: str
    a: tuple[str, str]
    b: list[tuple[str, str]]
    attrs: dict
    ends: dict  # side -> dict of connector fields
    result: RowResult
    terms: list = field(default_factory=list)  # (key, (device, port), Port, termination), once checked
    cable: Cable | None = None  # the recorded cable a "change" row changes
    cable_id: int | None = None  # the new cable's id, once written


# Enum ``.values`` rebuilds its list on every access (3 lookups a row was 15% of an import).
_KINDS = frozenset(CableKind.values)
_ROLES = frozenset(CableRole.values)
_POLARITIES = frozenset(Polarity.values)
# Connector words are read whatever their case ("none", "NONE", "lc"), as the recorded value.
_CONNECTORS = {v.upper(): v for v in ConnectorType.values}
_POLISHES = frozenset(Polish.values)


def _text(raw: dict, key: str) -> str:
    v = raw.get(key)
    return "" if v is None else str(v).strip()


def plan_row_parse(n: int, raw: dict) -> PlanRow:
    """Row ``n`` of a plan read into typed values; every problem it can see alone is in its errors."""
    res = RowResult(row=n, label=_text(raw, "label"), action="create")
    err = res.errors
    if raw.get("_error"):  # a reader (e.g. the topology list) already knows this row is unusable
        err["row"] = str(raw["_error"])
    if isinstance(raw.get("_errors"), dict):  # ... or which of its columns is (NetBox's length unit)
        err.update({str(k): str(v) for k, v in raw["_errors"].items()})
    # No name or value of a plan holds a NUL (PostgreSQL refuses it in text): the field is an
    # error of the row, and its names are not looked up (``cable_plan._named_terms``).
    for key, value in raw.items():
        if isinstance(value, str) and "\x00" in value:
            err[str(key)] = "Contains a NUL character."
    label = res.label
    if not label:
        err["label"] = "Required."
    elif not LABEL_RE.fullmatch(label):
        err["label"] = LABEL_RULE
    kind = _text(raw, "kind").upper().replace("-", "_")
    if kind not in _KINDS:
        err["kind"] = f"Unknown cable kind {raw.get('kind')!r}; one of {', '.join(CableKind.values)}."
    a = (_text(raw, "a_device"), _text(raw, "a_port"))
    b_dev, b_ports = _text(raw, "b_device"), [p.strip() for p in _text(raw, "b_port").split(";") if p.strip()]
    for side, (dev, port) in (("a", a), ("b", (b_dev, b_ports[0] if b_ports else ""))):
        if not dev:
            err[f"{side}_device"] = "Required."
        if not port:
            err[f"{side}_port"] = "Required."
    if len(b_ports) > 1 and not 2 <= len(b_ports) <= 8:
        err["b_port"] = "A breakout has 2 to 8 legs."
    attrs: dict = {}
    role = _text(raw, "role").lower() or (CableRole.BREAKOUT if len(b_ports) > 1 else CableRole.DIRECT)
    if role not in _ROLES:
        err["role"] = f"Unknown role {role!r}; one of {', '.join(sorted(_ROLES))}."
    attrs["role"] = role
    polarity = _text(raw, "polarity").upper()
    if polarity not in _POLARITIES:
        err["polarity"] = f"Unknown polarity {polarity!r}; one of A, B, C, AB, AA."
    attrs["polarity"] = polarity
    length = _text(raw, "length_m")
    attrs["length_m"] = None
    if length:
        try:
            value = Decimal(length)
            if not value.is_finite():
                raise InvalidOperation
        except InvalidOperation:
            err["length_m"] = f"Not a number: {length!r}."
        else:
            if abs(value) <= MAX_LENGTH_M:  # past it, quantize has no room (1e30)
                value = value.quantize(Decimal("0.01"))
            if value <= 0:
                err["length_m"] = "Must be positive."
            elif value > MAX_LENGTH_M:
                # Stored, it broke every read of the cable (its page, the lists, the alert rules).
                err["length_m"] = f"At most {MAX_LENGTH_M} m, not {length}."
            else:
                attrs["length_m"] = value
    install = _text(raw, "install_date")
    attrs["install_date"] = None
    if install:
        try:
            attrs["install_date"] = date.fromisoformat(install)
        except ValueError:
            err["install_date"] = f"Not a date (YYYY-MM-DD): {install!r}."
    status = _text(raw, "status").lower() or (
        CableStatus.INSTALLED if attrs["install_date"] else CableStatus.PLANNED
    )
    if status not in (CableStatus.PLANNED, CableStatus.INSTALLED):
        err["status"] = (
            "A plan imports cables as planned or installed; later states come from tests and the gate."
        )
    attrs["status"] = status
    for key, limit in (
        ("part_number", 100),
        ("serial_a", 100),
        ("serial_b", 100),
        ("lot", 40),
        ("notes", 2000),
    ):
        value = _text(raw, key)
        if len(value) > limit:
            err[key] = f"At most {limit} characters."
        attrs[key] = value
    attrs["vendor_name"] = _text(raw, "vendor")
    ends = {}
    for side in ("a", "b"):
        conn_text = _text(raw, f"{side}_connector")
        conn = _CONNECTORS.get(conn_text.upper(), "")
        if conn_text and not conn:
            err[f"{side}_connector"] = (
                f"Unknown connector {conn_text!r}; one of {', '.join(ConnectorType.values)}."
            )
        fibres = _text(raw, f"{side}_fibres")
        fc = None
        if fibres:
            if is_whole_number(fibres) and 1 <= int(fibres) <= 32:
                fc = int(fibres)
            else:
                err[f"{side}_fibres"] = "A fibre count from 1 to 32."
        pinned = _text(raw, f"{side}_pinned").lower()
        pin = True if pinned in TRUE else False if pinned in FALSE else None
        if pinned and pin is None:
            err[f"{side}_pinned"] = "yes/no."
        polish = _text(raw, f"{side}_polish").upper()
        if polish and polish not in _POLISHES:
            err[f"{side}_polish"] = "UPC or APC."
        ends[side] = {"connector_type": conn, "fibre_count": fc, "pinned": pin, "polish": polish}
    if err:
        res.action = "error"
    return PlanRow(n, label, kind, a, [(b_dev, p) for p in b_ports], attrs, ends, res)
