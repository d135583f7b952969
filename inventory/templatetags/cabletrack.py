from django import template

from inventory.core.choices import CableStatus

register = template.Library()
_CABLE_STATUS = dict(CableStatus.choices)


@register.filter
def cable_status_label(value: str) -> str:
    """``in_production`` -> ``In production``."""
    return _CABLE_STATUS.get(value, value)
