"""``{% load evidence_tags %}``: alert evidence as words a person reads, not raw keys and lists.

``{% for label, text in ends|evidence_items %}`` gives ``("Pre-FEC BER", "2.1e-06")`` pairs,
from the one vocabulary (``inventory.core.words``: ``KEYS`` and ``evidence_rows``).
"""

from __future__ import annotations

from django import template

from inventory.core.words import evidence_rows

register = template.Library()


@register.filter
def evidence_items(evidence) -> list[tuple[str, str]]:
    """``{"pre_fec_ber": 2.1e-06, "port_id": 7}`` -> ``[("Pre-FEC BER", "2.1e-06")]`` (ids left out)."""
    return evidence_rows(evidence)
