"""``{% load alerts_tags %}``: the alert blocks, for pages that do not build the context themselves.

``{% cable_alerts cable %}`` renders ``inventory/_cable_alerts.html`` with
``inventory.selectors.alerts.queries.cable_alerts_context(cable)``; ``{% dashboard_alerts %}`` renders
``inventory/_dashboard_alerts.html``; ``{% rack_alerts rack %}`` renders ``inventory/_rack_alerts.html``
(open alerts of a rack, each with its link's FEC sparkline over the last day).
"""

from django import template

from inventory.selectors.alerts import queries as alert_selectors

register = template.Library()


@register.inclusion_tag("inventory/_cable_alerts.html")
def cable_alerts(cable):
    return alert_selectors.cable_alerts_context(cable)


@register.inclusion_tag("inventory/_dashboard_alerts.html")
def dashboard_alerts():
    return alert_selectors.dashboard_alerts()


@register.inclusion_tag("inventory/_rack_alerts.html")
def rack_alerts(rack):
    return alert_selectors.rack_alerts_context(rack)
