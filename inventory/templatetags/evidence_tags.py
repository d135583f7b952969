"""``{% load evidence_tags %}``: alert evidence as words a person reads, not raw keys and lists.

``{% for label, text in ends|evidence_items %}`` gives ``("Pre-FEC BER", "2.1e-06")`` pairs;
``{{ code|code_label }}`` names a cable kind, verdict or status (``SMF_OS2`` -> ``Single-mode
OS2``). Kept small and in one place until the shared vocabulary module replaces it.
"""

from __future__ import annotations

from django import template

from inventory.core.choices import CableKind, CableStatus, Verdict

register = template.Library()

_CODES = {**dict(CableKind.choices), **dict(CableStatus.choices), **dict(Verdict.choices)}
# Words that are abbreviations or units: written as people write them.
_WORDS = {
    "ber": "BER",
    "fec": "FEC",
    "pre": "pre",
    "dbm": "dBm",
    "db": "dB",
    "rx": "Rx",
    "tx": "Tx",
    "cw": "codewords",
    "pfc": "PFC",
    "id": "ID",
    "mw": "mW",
    "c": "°C",
}


# Evidence the alert page lays out itself (the ports, modules, path and per-end blocks).
_SHOWN_ELSEWHERE = {"ports", "modules", "segments", "ends"}


def _label(key: str) -> str:
    words = [_WORDS.get(w, w) for w in str(key).split("_") if w]
    text = " ".join(words)
    text = text.replace("pre FEC", "pre-FEC")
    return text[:1].upper() + text[1:]


def _text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.1e}"
        return f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value) or "none"
    if isinstance(value, dict):
        return "; ".join(f"{_label(k)} {_text(v)}" for k, v in value.items())
    if value is None:
        return "none"
    return _CODES.get(value, str(value)) if isinstance(value, str) else str(value)


@register.filter
def evidence_items(evidence) -> list[tuple[str, str]]:
    """``{"pre_fec_ber": 2.1e-06, "port_id": 7}`` -> ``[("Pre-FEC BER", "2.1e-06")]`` (ids left out)."""
    if not isinstance(evidence, dict):
        return []
    return [
        (_label(k), _text(v))
        for k, v in evidence.items()
        if not str(k).endswith("_id") and k not in _SHOWN_ELSEWHERE
    ]


@register.filter
def code_label(value) -> str:
    return _CODES.get(value, value) if isinstance(value, str) else value
