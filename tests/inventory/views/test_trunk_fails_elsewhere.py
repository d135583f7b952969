"""A trunk between panels carrying several links, one of which fails on another cable: the trunk's
page, the desk list and the API say the trunk's own state and name the failing cable once; the
path is the link's, device end to device end, with the trunk marked.

Plant (``conftest.plant``, and a second link through the trunk)::

    [gpu-0001 eth1]--J-100--[pp-a Front 1]==T-100==[pp-b Front 1]--J-101--[leaf-01 Ethernet2/1]
    [gpu-0001 eth2]--J-103--[pp-a Front 2]==T-100==[pp-b Front 2]--J-104--[leaf-01 Ethernet2/2]
                                                                   (J-104 fails its budget)
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.core.choices import CableStatus
from inventory.models import Cable
from tests import factories as f
from tests.inventory.story_checks import story_problems
from tests.inventory.views.conftest import without_name_spans
from tests.inventory.views.test_cable_page_evidence import olts

pytestmark = pytest.mark.django_db

FAILING = "J-104 segment (power-meter test): 3.90 dB, over its 1.50 dB TIA-568.3 budget"
CHANNEL = "link gpu-0001:eth2 \u2194 leaf-01:Ethernet2/2 channel: 4.90 dB, over its 3.00 dB"


def _build(plant, trunk_loss: float):
    f.jumper("J-103", plant["gpu"][2], plant["pa_front"][1], length_m=5)  # no OTDR trace due
    f.jumper("J-104", plant["pb_front"][1], plant["leaf"][3])
    now = timezone.now()
    for label, loss, n in (("J-100", 0.4, 8), ("J-101", 0.4, 8), ("J-103", 0.4, 8), ("J-104", 3.9, 8)):
        olts(Cable.objects.get(label=label), loss, n, now)
    trunk = Cable.objects.get(label="T-100")
    olts(trunk, trunk_loss, 24, now)
    trunk.status = CableStatus.IN_PRODUCTION
    trunk.length_m = 5  # within the OTDR's dead zone: the power-meter test is its gate
    trunk._change_reason = "test setup"
    trunk.save()
    return plant


@pytest.fixture
def trunk_plant(plant):
    return _build(plant, 0.6)


def _status(html: str) -> str:
    return html.split('aria-label="Status"', 1)[1].split("</section>", 1)[0]


def _path(html: str) -> str:
    return html.split('id="path"', 1)[1].split("</section>", 1)[0]


def test_a_trunk_whose_link_fails_on_a_patch_cord_says_its_own_state_and_names_the_cord_once(
    trunk_plant, tech_client
):
    html = without_name_spans(tech_client.get("/c/T-100").content.decode())
    status = _status(html)
    assert 'data-state="ok"' in status
    assert "Tests fail" not in status  # no flag: its own tests pass
    assert "In production: its own tests pass." in status
    assert "A link it carries fails elsewhere:" in status
    assert f"{FAILING}</a>" in status and '<a href="/c/J-104#tests">direct' in status
    assert '<a href="/c/J-104#tests">link gpu-0001:eth2' in status  # each a link to the cord's tests
    # named once: not again as a step's reason, nor in the Tests card
    assert html.count(FAILING) == 1 and html.count(CHANNEL) == 1
    assert story_problems(html) == []

    # The path of that link, device end to device end, the trunk marked; the link's real ends.
    path = _path(html).split("</p>", 1)[1]  # the drawing, after the line naming the link
    assert path.index("gpu-0001") < path.index("J-103") < path.index("T-100") < path.index("J-104")
    assert path.index("J-104") < path.index("leaf-01")
    assert 'data-testid="path-this"><a class="pd-label mono" href="/c/T-100">T-100</a>' in path
    assert "this cable" in path and "One of the 2 links it carries, gpu-0001 eth2" in _path(html)
    ends = html.split('data-testid="link-ends"', 1)[1].split("</div>", 1)[0]
    assert "via J-103, T-100, J-104" in ends
    assert "gpu-0001" in ends and "eth2" in ends and "leaf-01" in ends and "Ethernet2/2" in ends
    assert "Rear 1" not in ends


def test_the_list_and_the_api_say_what_the_trunk_page_says(trunk_plant, tech_client, engineer_api):
    row = without_name_spans(tech_client.get("/cables/?q=T-100").content.decode()).split(
        'data-testid="row-next-step"', 1
    )[1]
    row = row.split("</td>", 1)[0]
    assert 'data-state="ok"' in row and "in production, tests pass" in row
    assert "a link fails at J-104" in row

    step = engineer_api.get("/api/cables/T-100/").json()["next_step"]
    assert step["state"] == "ok" and step["step"] is None
    assert step["headline"].startswith(
        "In production: its own tests pass. A link it carries fails elsewhere: "
    )
    assert [(x["segment"], x["own"]) for x in step["fails"]] == [("J-104", False), ("J-104", False)]
    listed = engineer_api.get("/api/cables/?label=T-100").json()["results"]
    assert [c["next_step"] for c in listed if c["label"] == "T-100"] == [step]


def test_a_patch_cord_on_the_failing_link_still_fails_and_says_it_once(trunk_plant, tech_client):
    """J-103 carries only the failing link: its state is that link's, the step opens J-104."""
    html = without_name_spans(tech_client.get("/c/J-103").content.decode())
    status = _status(html)
    assert 'data-state="fails"' in status and ">Tests fail<" in status
    assert ">Open J-104<" in status
    assert status.count(FAILING) == 1 and status.count(CHANNEL) == 1  # not again as the step's reason
    assert "Its own tests pass: the failure above is on J-104." in status


def test_a_trunk_whose_own_test_fails_still_says_tests_fail(plant, tech_client, engineer_api):
    _build(plant, 3.9)
    status = _status(without_name_spans(tech_client.get("/c/T-100").content.decode()))
    assert 'data-state="fails"' in status and ">Tests fail<" in status
    assert "trunk T-100 segment (power-meter test): 3.90 dB" in status
    assert ">Mark degraded<" in status
    step = engineer_api.get("/api/cables/T-100/").json()["next_step"]
    assert step["state"] == "fails" and ("T-100", True) in [(x["segment"], x["own"]) for x in step["fails"]]


def test_a_patch_cord_whose_own_retest_is_due_is_sent_to_it_not_told_its_tests_pass(plant, tech_client):
    """As C000674 in the demo: J-103's own power-meter test is 100 days old, and its link fails
    on J-104. Its step is its own retest, here at the rack, with the failure elsewhere named
    beside it; never "Its own tests pass"."""
    _build(plant, 0.6)
    old = timezone.now() - timedelta(days=100)
    j103 = Cable.objects.get(label="J-103")
    j103.tests.all().delete()
    olts(j103, 0.4, 8, old)
    status = _status(without_name_spans(tech_client.get("/c/J-103").content.decode()))
    assert ">Tests fail<" in status and status.count(FAILING) == 1
    assert ">Record the power-meter test<" in status and ">Open J-104<" not in status
    assert "Its own test is due too; the failure above is on J-104." in status
    assert "Its own tests pass" not in status
