"""Fixtures shared by the API, service and security tests."""

import pytest


@pytest.fixture
def netbox():
    """A fake NetBox API server on loopback serving the real captured responses
    (``test_netbox_import.FakeNetbox``: ``docs`` to edit, ``patches`` recorded); shut down after
    the test."""
    from tests.inventory.services.interop.test_netbox_import import FakeNetbox

    fake = FakeNetbox()
    yield fake
    fake.server.shutdown()
