"""``{% load path_tags %}``: the drawn path of a channel and the links a trunk carries.

``{% path_diagram trace %}`` renders ``inventory/_path_diagram.html`` for a
``selectors.plant.trace.Trace`` (the cable page's ``trace``, the port page's; the cable page
adds its label, ``{% path_diagram trace cable.label %}``, to mark its own segment);
``{% trunk_links cable links %}`` renders ``inventory/_trunk_links.html``: every link the trunk
carries, with both ends and its fibre position.
"""

from django import template

from inventory.selectors.pages.path import path_diagram as build_diagram
from inventory.selectors.pages.path import trunk_links as build_trunk_links

register = template.Library()


@register.inclusion_tag("inventory/_path_diagram.html")
def path_diagram(trace, this=""):
    """``this``: the label of the page's own cable, marked on the path."""
    return {"diagram": build_diagram(trace), "this": this}


@register.inclusion_tag("inventory/_trunk_links.html")
def trunk_links(cable, links):
    return {"cable": cable, "trunk_links": build_trunk_links(cable, links)}
