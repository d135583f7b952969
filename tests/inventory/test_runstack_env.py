"""``make run ADDR=...``: QR codes and mail links follow the address the stack serves."""

from inventory.management.commands.runstack import stack_env


def test_base_url_follows_the_address_served_unless_set():
    assert stack_env("127.0.0.1:8103", {"PATH": "/bin"})["CABLETRACK_BASE_URL"] == "http://127.0.0.1:8103"
    assert stack_env("127.0.0.1:8103", {"CABLETRACK_BASE_URL": ""})["CABLETRACK_BASE_URL"] == (
        "http://127.0.0.1:8103"
    )
    chosen = {"CABLETRACK_BASE_URL": "https://cabletrack.example.com"}
    assert stack_env("0.0.0.0:8000", chosen)["CABLETRACK_BASE_URL"] == "https://cabletrack.example.com"
    assert stack_env("127.0.0.1:8103", {"PATH": "/bin"})["PATH"] == "/bin"  # the rest passes through
