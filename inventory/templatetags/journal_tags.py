"""``{% load journal_tags %}``: the journal block of a cable, module, device or rack page.

``{% journal obj %}`` renders ``inventory/_journal.html``: open faults and notes first (each
with a Close button for those who may), a link to add an entry, and the latest entries.
``{% print_labels_for rack %}`` renders the rack page's "Print label" buttons.
"""

from django import template

from inventory.access import authz
from inventory.selectors.plant.journal import journal_for

register = template.Library()


@register.inclusion_tag("inventory/_journal.html", takes_context=True)
def journal(context, obj, limit: int = 10):
    request = context.get("request")
    user = getattr(request, "user", None)
    ctx = journal_for(obj, limit=limit)
    ctx["may_write"] = authz.can(user, "report_fault", obj)
    ctx["next"] = request.get_full_path() if request is not None else ""
    ctx["csrf_token"] = context.get("csrf_token")
    return ctx


@register.inclusion_tag("inventory/_print_labels.html", takes_context=True)
def print_labels_for(context, rack):
    request = context.get("request")
    user = getattr(request, "user", None)
    return {
        "rack": rack,
        "may_print": authz.has_perm(user, "inventory.print_labels"),
        "csrf_token": context.get("csrf_token"),
    }
