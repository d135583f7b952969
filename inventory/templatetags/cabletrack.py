from datetime import date, datetime

from django import template
from django.utils import timezone

from inventory.core import words as vocabulary

register = template.Library()


@register.filter
def cable_status_label(value: str) -> str:
    """``in_production`` -> ``In production``."""
    return vocabulary.word(value, "status")


@register.filter
def words(value, domain: str = "") -> str:
    """Human words for a code (``inventory.core.words``): ``{{ c.kind|words }}``, ``{{ v|words:"verdict" }}``."""
    return vocabulary.word(value, domain)


@register.filter
def reason(value) -> str:
    """A history reason in words (``inventory.core.words.human_reason``): no raw codes."""
    return vocabulary.human_reason(value)


@register.filter
def tone(verdict: str) -> str:
    """The colour class of a verdict: ``ok``, ``warn``, ``bad`` or ``none`` (unknown is never green)."""
    return vocabulary.verdict_tone(verdict)


@register.filter
def message_size(value) -> str:
    """``256 MiB``: the unit the headline and NCCL use (Django's filesizeformat says "256.0 MB")."""
    try:
        return vocabulary.message_size(int(value))
    except (TypeError, ValueError):
        return ""


@register.filter
def when(value) -> str:
    """A moment as people read it (``today 14:05``, ``3 Nov 09:00``), in the site's time zone."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    return vocabulary.human_when(value, today=timezone.localdate())


@register.filter
def day(value) -> str:
    """A calendar day as people read it (``today``, ``3 Nov``, ``3 Nov 2025``)."""
    if isinstance(value, str) and value:
        try:  # an ISO date kept in JSON (alert evidence): read it, never show it raw
            value = date.fromisoformat(value[:10])
        except ValueError:
            return value
    if isinstance(value, datetime) and timezone.is_aware(value):
        value = timezone.localtime(value)
    if not isinstance(value, (date, datetime)):
        return value or ""
    return vocabulary.human_date(value, today=timezone.localdate())
