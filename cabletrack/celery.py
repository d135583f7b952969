"""The Celery app, configured from Django settings (``CELERY_*``)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")

app = Celery("cabletrack")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
