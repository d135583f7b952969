import pytest

from inventory.core.choices import DeviceRole
from inventory.models import Link
from inventory.tasks import links_refresh_task
from tests import factories as f
from tests.workers import wait_for

pytestmark = pytest.mark.worker


def test_a_real_worker_runs_the_link_refresh_task(celery_worker_proc):
    """The task runs in another process, on the broker the settings name, against the test DB."""
    _, gpu = f.twin_port_device("gpu-w", role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}")
    _, leaf = f.twin_port_device("leaf-w", u=10)
    cable = f.jumper("J-W", gpu[0], leaf[0])
    link = Link.objects.get(active=True)
    link.active = False
    link.save()
    links_refresh_task.delay([gpu[0].pk])
    refreshed = wait_for(lambda: Link.objects.filter(active=True, segments__cable=cable).first())
    # The worker found the link again over J-W: the GPU port to the leaf port.
    assert {refreshed.a_port_id, refreshed.b_port_id} == {gpu[0].pk, leaf[0].pk}
