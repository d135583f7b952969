"""Behind a load balancer (issue 14): the client address and HTTPS are believed only from the
configured proxies (``CABLETRACK_TRUSTED_PROXIES``), the login throttle cannot lock out everyone
behind one proxy, and the API schema and docs need a login.

    client 203.0.113.9 --> [load balancer 10.0.0.1] --> gunicorn     (X-Forwarded-For: 203.0.113.9)
    attacker 198.51.100.7 --------------------------------> gunicorn (X-Forwarded-For: anything)
"""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

LB = "10.0.0.1"
PASSWORD = "a-long-passphrase-42"


@pytest.fixture
def behind_lb(settings):
    settings.CABLETRACK_TRUSTED_PROXIES = ["10.0.0.0/24"]
    settings.CABLETRACK_METRICS_NETWORKS = ["203.0.113.0/24"]
    settings.CABLETRACK_METRICS_TOKEN = ""
    return settings


def test_metrics_networks_see_the_client_a_trusted_proxy_names(plant, behind_lb):
    via_lb = Client(REMOTE_ADDR=LB, HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert via_lb.get("/metrics").status_code == 200
    outsider = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert outsider.get("/metrics").status_code == 401  # its own claim is not believed


def test_a_forged_hop_left_of_the_client_is_not_believed(plant, behind_lb):
    # The balancer appends the peer it saw; what the client wrote before it is the client's claim.
    forged = Client(REMOTE_ADDR=LB, HTTP_X_FORWARDED_FOR="203.0.113.9, 198.51.100.7")
    assert forged.get("/metrics").status_code == 401


def test_https_is_believed_only_from_a_trusted_proxy(plant, behind_lb):
    behind_lb.SECURE_SSL_REDIRECT = True
    outsider = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_PROTO="https")
    response = outsider.get("/login/")
    assert response.status_code == 301 and response["Location"].startswith("https://")
    via_lb = Client(REMOTE_ADDR=LB, HTTP_X_FORWARDED_PROTO="https", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert via_lb.get("/login/").status_code == 200


def _login(client, username, password):
    return client.post("/login/", {"username": username, "password": password})


def _with_password(plant, role):
    user = plant.users[role]
    user.set_password(PASSWORD)
    user.save()
    return user


def test_failures_behind_one_proxy_do_not_lock_out_everyone_behind_it(plant):
    # No trusted proxies configured: every user arrives from the balancer's one address.
    _with_password(plant, "engineer")
    _with_password(plant, "viewer")
    lb = Client(REMOTE_ADDR=LB)
    for _ in range(6):
        assert _login(lb, "viewer", "wrong").status_code != 302
    assert _login(Client(REMOTE_ADDR=LB), "engineer", PASSWORD).status_code == 302


def test_the_throttle_locks_the_guessing_client_and_not_the_user_elsewhere(plant, behind_lb):
    _with_password(plant, "engineer")
    attacker = Client(REMOTE_ADDR=LB, HTTP_X_FORWARDED_FOR="198.51.100.7")
    for _ in range(6):
        assert _login(attacker, "engineer", "wrong").status_code != 302
    assert _login(attacker, "engineer", PASSWORD).status_code == 429  # locked from there
    office = Client(REMOTE_ADDR=LB, HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert _login(office, "engineer", PASSWORD).status_code == 302


def test_a_direct_client_cannot_dodge_the_throttle_by_naming_other_addresses(plant, behind_lb):
    _with_password(plant, "engineer")
    for i in range(6):
        spoofer = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
        _login(spoofer, "engineer", "wrong")
    spoofer = Client(REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert _login(spoofer, "engineer", PASSWORD).status_code == 429


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/", "/api/redoc/"])
def test_the_schema_and_docs_need_a_login(plant, url):
    assert Client().get(url).status_code in (401, 403)
    client = Client()
    client.force_login(plant.users["viewer"])
    assert client.get(url).status_code == 200
