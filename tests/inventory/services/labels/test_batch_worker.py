"""A large print job renders on a real Celery worker; the page then offers the download."""

import pytest
from django.urls import reverse

from inventory.core.choices import DeviceRole, LabelBatchStatus
from inventory.models import LabelBatch
from tests import factories as f
from tests.qrscan import decode_pdf
from tests.workers import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_batch_renders_on_a_worker_and_downloads_as_an_attachment(
    celery_worker_proc, client, user_with_role, settings
):
    """[gpu-bw ethN]--B-00N--[leaf-bw EthernetX/Y], N = 0..5, both racks in row A."""
    settings.CABLETRACK_LABELS_INLINE_MAX = 4
    _, gpu = f.twin_port_device(
        "gpu-bw", cages=3, role=DeviceRole.GPU_NODE, names=lambda c, k: f"eth{2 * c + k}"
    )
    _, leaf = f.twin_port_device("leaf-bw", u=20, cages=3)
    cables = [f.jumper(f"B-{i:03d}", gpu[i], leaf[i]) for i in range(6)]
    client.force_login(user_with_role("engineer"))

    r = client.post(reverse("labels-print"), {"cable": [c.pk for c in cables], "stock": "letter"})
    batch = LabelBatch.objects.get()
    assert r.status_code == 302 and r["Location"] == batch.get_absolute_url()

    status_url = reverse("label-batch-status", kwargs={"uid": batch.uid})
    done = wait_for(
        lambda: (s := client.get(status_url).json())["status"] == LabelBatchStatus.DONE and s, timeout=60
    )
    assert done["done"] == done["total"] == 12 and done["percent"] == 100
    page = client.get(batch.get_absolute_url()).content.decode()
    assert "Download PDF" in page and "hidden" not in page.split('id="batch-download"')[1].split(">")[0]

    download = client.get(done["download"])
    assert download.status_code == 200
    assert download["Content-Disposition"].startswith("attachment;")
    content = b"".join(download.streaming_content)
    urls = [u for p in decode_pdf(content) for u in p]
    assert sorted(urls) == sorted(f"{settings.CABLETRACK_BASE_URL}/c/{c.label}" for c in cables for _ in "AB")
    assert client.get(urls[0].removeprefix(settings.CABLETRACK_BASE_URL)).context["cable"].label == "B-000"

    client.logout()
    assert client.get(done["download"]).status_code == 302  # logged-in users only
    batch.refresh_from_db()
    batch.file.delete(save=False)
