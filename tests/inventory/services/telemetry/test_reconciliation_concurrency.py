"""Two confirmations of the same reviewed step at once (a double click, two tabs, a client
retry racing the first): one creates the module, the other waits on the cage lock and then
reports it as already recorded. Nothing twice, no error. Plant: the reconciliation API tests'.
"""

import threading

import pytest
from django.db import connection
from django.utils import timezone

from inventory.models import Transceiver, TransceiverPlacement
from inventory.services.telemetry import reconciliation as svc
from tests.inventory.api.test_reconciliation_api import recon as recon  # noqa: F401 - fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_simultaneous_confirmations_create_the_module_once(recon, user_with_role):  # noqa: F811
    eng = user_with_role("engineer")
    preview = svc.reconciliation_preview(actor=eng, now=timezone.now(), rack="REC-1")
    assert [r.seen_serial for r in preview.create] == ["LEAF-SN-1"]
    barrier = threading.Barrier(2)
    results, errors = [], []

    def confirm():
        try:
            barrier.wait(timeout=10)
            results.append(svc.reconciliation_apply(token=preview.token, actor=eng, now=timezone.now()))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=confirm) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert sorted((len(r.created), len(r.already_recorded)) for r in results) == [(0, 1), (1, 0)]
    x = Transceiver.objects.get(serial="LEAF-SN-1")
    assert TransceiverPlacement.objects.filter(transceiver=x).count() == 1
    assert x.history.count() == 1
