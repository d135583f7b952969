"""One seed for all of a module's tests, rolled back at the module's end.

A demo seed takes seconds; the tests that read it take milliseconds. ``seeded_module(build)``
makes a module-scoped fixture that runs ``build()`` once inside a transaction that is rolled back
when the module's last test is done. Each test still runs in its own savepoint (pytest-django's
``db``, the ``django_db`` mark): what a test writes is undone before the next one starts, so every
test sees the seed exactly as ``build()`` left it, as it would with a seed of its own.

Under ``make test``'s two workers a module's tests are shared between them, so the seed is
built at most once on each. None of the module's tests may be transactional (``transactional_db``,
``live_server``): those commit and truncate, which a transaction around them cannot hold, and the
module may seed nothing else (a second seed would stack on the first). The fixture's value is
whatever ``build()`` returns; model instances in it are shared by the module's tests, so a test that
changes one should read its own copy from the database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction


def seeded_module(build: Callable[[], Any]):
    @pytest.fixture(scope="module")
    def fixture(django_db_setup, django_db_blocker):
        with django_db_blocker.unblock(), transaction.atomic():
            value = build()
            try:
                with django_db_blocker.block():
                    yield value
            finally:
                transaction.set_rollback(True)

    fixture.__doc__ = build.__doc__
    return fixture
