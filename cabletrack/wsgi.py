"""WSGI entry point (gunicorn cabletrack.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
application = get_wsgi_application()
