FROM python:3.11-slim
# The application directory (/app) is read-only at run time: static files are collected here, at
# build time; everything written at run time (uploads, the beat schedule) goes to the /data volume.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_STATIC_ROOT=/app/staticfiles \
    CABLETRACK_VAR_DIR=/data CABLETRACK_UPLOAD_ROOT=/data/uploads
WORKDIR /app
COPY requirements/prod.lock ./requirements/prod.lock
# The versions CI tested, pinned with hashes (runtime + the NetBox/Nautobot extra), then the project alone.
RUN pip install --no-cache-dir --require-hashes -r requirements/prod.lock
COPY pyproject.toml README.md ./
COPY cabletrack ./cabletrack
COPY inventory ./inventory
COPY templates ./templates
COPY manage.py ./
RUN pip install --no-cache-dir --no-deps .
# collectstatic needs production settings to load, not a database or broker: placeholders only.
RUN DJANGO_DEBUG=false DJANGO_SECRET_KEY=collectstatic-only DATABASE_URL=sqlite:////tmp/unused.sqlite3 \
    REDIS_URL=redis://unused:6379/0 python manage.py collectstatic --noinput \
    && rm -f /tmp/unused.sqlite3
RUN useradd --system --home-dir /data cabletrack && mkdir -p /data/uploads && chown -R cabletrack /data
USER cabletrack
VOLUME /data
EXPOSE 8000
# Liveness and database reachability, asked with a Host the site accepts (DJANGO_ALLOWED_HOSTS).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD python -c "import http.client,os; \
c=http.client.HTTPConnection('127.0.0.1',8000,timeout=4); \
c.request('GET','/healthz',headers={'Host':os.environ.get('DJANGO_ALLOWED_HOSTS','localhost').split(',')[0]}); \
raise SystemExit(c.getresponse().status!=200)"
# The web process; the compose file runs the worker, beat and the one-shot migrate from this image.
CMD ["gunicorn", "cabletrack.wsgi", "-b", "0.0.0.0:8000", "-w", "4", "--max-requests", "2000", "--timeout", "60", "--worker-tmp-dir", "/dev/shm"]
