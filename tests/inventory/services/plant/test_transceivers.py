from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from inventory.core.choices import PlacementEnd, RmaOutcome, TransceiverStatus
from inventory.models import Cage, Transceiver, TransceiverPlacement
from inventory.selectors.plant.history import history_for
from inventory.services.plant import transceivers as svc
from tests import factories as f

pytestmark = pytest.mark.django_db


def test_swap_keeps_both_modules_histories():
    _, ports = f.twin_port_device("leaf-s", cages=1)
    cage = Cage.objects.get(device__name="leaf-s")
    old = Transceiver.objects.get(cage=cage)
    new = f.module(serial="NEW-0001")
    t0 = timezone.now()
    svc.transceiver_swap(cage=cage, new=new, old_failed=True, notes="rx LOS on lane 3", now=t0)

    old.refresh_from_db()
    new.refresh_from_db()
    assert old.status == TransceiverStatus.FAILED and old.cage is None
    assert new.status == TransceiverStatus.INSTALLED and new.cage == cage
    ended = TransceiverPlacement.objects.get(transceiver=old)
    assert ended.removed_at == t0 and ended.end_reason == PlacementEnd.FAILED and "lane 3" in ended.notes
    assert TransceiverPlacement.objects.get(transceiver=new, removed_at__isnull=True).cage == cage
    what = [(h["subject"], h["what"]) for h in history_for(old)]
    assert ("module " + old.serial, "changed") in what


def test_a_module_cannot_be_in_two_cages_or_a_cage_hold_two():
    _, _ = f.twin_port_device("leaf-t", cages=2)
    c1, c2 = Cage.objects.filter(device__name="leaf-t").order_by("index")
    in_c1 = Transceiver.objects.get(cage=c1)
    with pytest.raises(ValidationError, match="already installed"):
        svc.transceiver_install(transceiver=in_c1, cage=c2)
    with pytest.raises(ValidationError, match="already holds"):
        svc.transceiver_install(transceiver=f.module(), cage=c1)


def test_rma_no_trouble_found_returns_to_spares_confirmed_retires():
    _, _ = f.twin_port_device("leaf-r", cages=2)
    c1, c2 = Cage.objects.filter(device__name="leaf-r").order_by("index")
    a, b = Transceiver.objects.get(cage=c1), Transceiver.objects.get(cage=c2)
    now = timezone.now()
    for x in (a, b):
        svc.transceiver_remove(transceiver=x, reason=PlacementEnd.FAILED, now=now)
    case_a = svc.transceiver_rma_open(transceiver=a, reference="RMA-1", now=now)
    case_b = svc.transceiver_rma_open(transceiver=b, reference="RMA-2", now=now)
    svc.rma_close(case=case_a, outcome=RmaOutcome.NO_TROUBLE_FOUND, now=now + timedelta(days=20))
    svc.rma_close(case=case_b, outcome=RmaOutcome.CONFIRMED, now=now + timedelta(days=20))
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.status == TransceiverStatus.SPARE
    assert b.status == TransceiverStatus.RETIRED
