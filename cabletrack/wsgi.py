"""WSGI entry point (gunicorn cabletrack.wsgi; ``runserver`` loads it too)."""

import os

from django.core.wsgi import get_wsgi_application
from django.db.backends.signals import connection_created
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cabletrack.settings")
application = get_wsgi_application()

from inventory.db.web import web_session  # noqa: E402 - needs the apps loaded above

# Every database session this process opens is a web one (inventory.db.web).
connection_created.connect(web_session, dispatch_uid="cabletrack.web_session")

# Django imports the URLconf, and with it every view and what they import, on a process's first
# request: about a second of CPU that request waited for, in every gunicorn worker after each
# start and each --max-requests recycle. Import it now. (Not scipy.stats: about 78 MB that only a
# forecast computation needs, imported then: ``inventory.core.forecast.maths``.)
get_resolver().url_patterns  # noqa: B018 - the attribute's import is the point

# Everything imported so far (Django, the views, numpy, the URLconf) lives as long as the process.
# Move it out of the collector's reach: a full collection otherwise walks that whole heap, which
# took 160-250 ms in one request of 300 to the cable page (4,096 GPUs, loaded machine); frozen, the
# full collections of those 300 requests took 8 ms together. Import-time garbage is never freed,
# a few kilobytes.
import gc  # noqa: E402

gc.freeze()
