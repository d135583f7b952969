"""A YAML plan is read with limits before the work: aliases refused (the 567-byte "billion
laughs" once took 8 s and 700 MB), a byte cap before parsing, the 20,000-cable cap counted while
parsing, and nesting bounded; each a clear 400 with nothing written."""

import pytest

from inventory.models import Cable
from inventory.services.plans import files

pytestmark = pytest.mark.django_db
URL = "/api/cables/import/?dry_run=0"

BOMB = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
cables: [{label: *h, kind: SMF_OS2}]
"""


def _post(client, text: str):
    return client.generic("POST", URL, text.encode(), content_type="application/yaml")


def test_a_yaml_alias_bomb_is_refused_at_once(engineer_api):
    assert len(BOMB) < 600
    r = _post(engineer_api, BOMB)
    assert r.status_code == 400
    assert "aliases" in r.json()["detail"]
    assert not Cable.objects.exists()


def test_a_merge_key_is_an_alias_too(engineer_api):
    text = "base: &e {kind: SMF_OS2}\ncables:\n- {<<: *e, label: C-1}\n"
    r = _post(engineer_api, text)
    assert r.status_code == 400 and "aliases" in r.json()["detail"]


def test_a_yaml_plan_over_the_byte_cap_is_refused_before_parsing(engineer_api, monkeypatch):
    monkeypatch.setattr(files, "YAML_MAX_BYTES", 1000)
    text = "cables:\n" + "".join(f"- {{label: C-{i}, kind: SMF_OS2}}\n" for i in range(100))
    r = _post(engineer_api, text)
    assert r.status_code == 400
    assert "at most" in r.json()["detail"]


def test_more_cables_than_the_cap_are_refused_while_parsing(engineer_api, monkeypatch):
    monkeypatch.setattr(files, "MAX_ROWS", 5)
    text = "cables:\n" + "".join(f"- {{label: C-{i}, kind: SMF_OS2}}\n" for i in range(6)) + "  broken: [\n"
    r = _post(engineer_api, text)
    assert r.status_code == 400
    # refused at the sixth cable: the syntax error after it was never reached
    assert "more than 5 cables" in r.json()["detail"]


def test_deeply_nested_yaml_is_a_400(engineer_api):
    r = _post(engineer_api, "cables: " + "[" * 50_000 + "]" * 50_000)
    assert r.status_code == 400


def test_an_unknown_yaml_tag_is_a_400(engineer_api):
    r = _post(engineer_api, "cables:\n- !!python/object:os.system {label: C-1}\n")
    assert r.status_code == 400
