"""The API's ``next_step``: the one decision, in the OpenAPI schema and on every cable.

[gpu-1 eth0]--J-1 (3 m OS2, planned, no test yet)--[leaf-1 Ethernet1/1]
"""

import pytest

from tests.inventory.testing_scenes import olts, os2_jumper

pytestmark = pytest.mark.django_db


def test_next_step_is_in_the_schema_and_on_list_and_detail(engineer_api):
    schema = engineer_api.get("/api/schema/?format=json").json()["components"]["schemas"]
    assert schema["Cable"]["properties"]["next_step"]["allOf"][0]["$ref"].endswith("/NextStep")
    props = schema["NextStep"]["properties"]
    assert {"state", "headline", "reasons", "step", "fails", "blocking_alerts"} <= set(props)
    assert set(schema["NextStepStateEnum"]["enum"]) >= {"alert", "fails", "untested", "ready", "ok"}

    cable = os2_jumper()
    detail = engineer_api.get("/api/cables/J-1/").json()["next_step"]  # planned: it goes in first
    assert detail["state"] == "untested" and (detail["step"]["key"], detail["step"]["status"]) == (
        "status",
        "installed",
    )
    assert engineer_api.post("/api/cables/J-1/status/", {"status": "installed"}).status_code == 200
    detail = engineer_api.get("/api/cables/J-1/").json()["next_step"]
    assert detail["state"] == "untested" and detail["step"]["key"] == "olts"
    assert detail["step"]["url"] == "/c/J-1/test/power-meter"

    olts(cable, [3.9] * 8)  # every fibre over its budget: fails, with the figure and the limit
    listed = engineer_api.get("/api/cables/").json()["results"][0]["next_step"]
    assert listed == engineer_api.get("/api/cables/J-1/").json()["next_step"]
    assert listed["state"] == "fails" and listed["fails"][0]["segment"] == "J-1"
    assert listed["fails"][0]["figure"] == "3.90 dB" and "dB" in listed["fails"][0]["limit"]
