"""Form widgets the pages need at a large site's size."""

from __future__ import annotations

from django import forms
from django.utils.html import escape
from django.utils.safestring import mark_safe


def _attrs(attrs: dict) -> str:
    """What Django's ``attrs.html`` writes: `` name="value"``, a bare name for True, nothing for False."""
    return "".join(
        f" {escape(k)}" if v is True else f' {escape(k)}="{escape(v)}"'
        for k, v in attrs.items()
        if v is not False
    )


class PlainSelect(forms.Select):
    """``forms.Select`` with its options written here instead of through two templates each
    (``select_option.html`` and ``attrs.html``): the retest filter's 513 rows of a 131,072-GPU site
    took about a third of a second of every worklist page that way. The same markup as
    ``forms.Select``; choices in groups go through Django's own rendering."""

    def render(self, name, value, attrs=None, renderer=None):
        widget = self.get_context(name, value, attrs)["widget"]
        if any(group for group, _, _ in widget["optgroups"]):
            return super().render(name, value, attrs, renderer)
        options = "".join(
            f'\n  <option value="{escape(o["value"])}"{_attrs(o["attrs"])}>{escape(o["label"])}</option>\n'
            for _, group, _ in widget["optgroups"]
            for o in group
        )
        html = f'<select name="{escape(widget["name"])}"{_attrs(widget["attrs"])}>{options}\n</select>'
        return mark_safe(html)  # noqa: S308 - every value and label is escaped above
