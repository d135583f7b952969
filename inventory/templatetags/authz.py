"""``{% load authz %}``: show only the actions the user may take.

{% can "record_test" cable as may_test %}{% if may_test %}<a ...>Record a test</a>{% endif %}
{% if request.user|may:"print_labels" %}...{% endif %}
"""

from django import template

from inventory.access import authz

register = template.Library()


@register.simple_tag(takes_context=True)
def can(context, action: str, obj=None) -> bool:
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    return authz.can(user, action, obj)


@register.filter
def may(user, action: str) -> bool:
    return authz.can(user, action)
