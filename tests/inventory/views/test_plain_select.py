"""``PlainSelect`` writes what Django's ``forms.Select`` writes, without a template per option."""

from django import forms

from inventory.forms.widgets import PlainSelect

CHOICES = [("", "any"), (1, 'Hall <1> & "North"'), (2, "row S02"), ("x'y", "quote's")]


def test_the_same_markup_as_djangos_select_for_every_value_and_attribute():
    for value in ("", 1, "2", "x'y", None, "missing"):
        for attrs in (None, {"id": "id_row", "required": True, "disabled": False, "data-x": 'a"b'}):
            ours = PlainSelect(choices=CHOICES).render("row", value, attrs)
            django = forms.Select(choices=CHOICES).render("row", value, attrs)
            assert ours == django, (value, attrs)
    assert "selected>Hall &lt;1&gt; &amp; &quot;North&quot;</option>" in PlainSelect(choices=CHOICES).render(
        "r", 1
    )


def test_grouped_choices_are_left_to_django():
    grouped = [("", "any"), ("Hall 1", [(1, "S01"), (2, "S02")])]
    assert PlainSelect(choices=grouped).render("row", 2) == forms.Select(choices=grouped).render("row", 2)
    assert "<optgroup" in PlainSelect(choices=grouped).render("row", 2)
