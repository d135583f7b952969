"""Sessions, CSRF, login throttling (django-axes), QR links and the login redirect."""

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.test import Client

from tests import factories as f

pytestmark = pytest.mark.django_db

PASSWORD = "pw-for-tests-1"


@pytest.fixture
def tech(db):
    return f.UserFactory(username="tina", role="technician")


def _login(client, username="tina", password=PASSWORD, next_url=None):
    data = {"username": username, "password": password}
    if next_url is not None:
        data["next"] = next_url
    return client.post("/login/" + (f"?next={next_url}" if next_url else ""), data, REMOTE_ADDR="10.0.0.7")


def test_login_makes_a_new_session_and_logout_ends_it(tech):
    client = Client()
    session = client.session
    session["probe"] = 1
    session.save()
    before_key = session.session_key
    client.cookies[settings.SESSION_COOKIE_NAME] = before_key
    assert _login(client).status_code == 302
    after_key = client.cookies[settings.SESSION_COOKIE_NAME].value
    assert after_key and after_key != before_key  # fixation: a fresh key on login
    assert client.get("/").status_code == 200
    stolen = Client()
    stolen.cookies[settings.SESSION_COOKIE_NAME] = after_key
    assert stolen.get("/").status_code == 200
    assert client.post("/logout/").status_code == 302
    # The old session key is dead server-side, not just forgotten by this browser.
    assert stolen.get("/").status_code == 302
    from django.contrib.sessions.models import Session

    assert not Session.objects.filter(session_key=after_key).exists()


def test_csrf_is_enforced_on_forms(tech):
    client = Client(enforce_csrf_checks=True)
    assert client.post("/login/", {"username": "tina", "password": PASSWORD}).status_code == 403
    page = client.get("/login/")
    assert "csrfmiddlewaretoken" in page.content.decode()
    client.force_login(tech)
    assert client.post("/profile/", {"name": "x", "kind": "full"}).status_code == 403
    assert client.post("/logout/").status_code == 403


def test_every_form_on_the_pages_carries_a_csrf_token(plant):
    client = Client()
    client.force_login(plant.users["engineer"])
    for url in ["/", "/profile/", f"/c/{plant.north_cable.label}", "/r/N01", "/search/?q=N"]:
        html = client.get(url).content.decode()
        assert html.count('method="post"') == html.count("csrfmiddlewaretoken"), url


def test_axes_locks_out_after_repeated_failures(tech, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(3):
        response = _login(client, password="wrong")
    assert AccessAttempt.objects.filter(username="tina").exists()
    assert AccessAttempt.objects.get(username="tina").failures_since_start == 3
    # Locked: even the right password is refused now, in this browser and in a fresh one.
    response = _login(client)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    fresh = Client()
    assert _login(fresh).status_code == 429
    assert fresh.get("/", REMOTE_ADDR="10.0.0.7").status_code == 302  # not logged in


def test_a_failure_below_the_limit_does_not_lock_and_success_resets(tech, settings):
    settings.AXES_FAILURE_LIMIT = 3
    client = Client()
    for _ in range(2):
        assert _login(client, password="wrong").status_code == 200  # the form again, with its error
    assert _login(client).status_code == 302
    assert client.get("/").status_code == 200
    # The success reset the count: two more failures (four in all) still do not lock tina out.
    assert not AccessAttempt.objects.filter(username="tina").exists()
    other = Client()
    for _ in range(2):
        assert _login(other, password="wrong").status_code == 200
    assert _login(other).status_code == 302


@pytest.mark.parametrize("path", ["/c/N-1", "/r/N01", "/", "/search/?q=x", "/profile/"])
def test_qr_links_and_pages_need_a_login(plant, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_after_login_the_qr_link_opens(plant):
    client = Client()
    redirect = client.get("/c/N-1")["Location"]
    response = client.post(redirect, {"username": "technician", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/c/N-1"


@pytest.mark.parametrize(
    "evil",
    [
        "https://evil.example/",
        "//evil.example/",
        "///evil.example/",
        "http:evil.example",
        "\\\\evil.example",
        "/\\evil.example",
        "https://testserver.evil.example/",
        "javascript:alert(1)",
        " https://evil.example",
    ],
)
def test_login_redirect_never_goes_off_site(tech, evil):
    response = _login(Client(), next_url=evil)
    assert response.status_code == 302
    location = response["Location"]
    assert location == settings.LOGIN_REDIRECT_URL or location == "/", location
