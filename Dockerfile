FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_STATIC_ROOT=/app/staticfiles
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
RUN useradd -r cabletrack && mkdir -p /data/uploads && chown cabletrack /data/uploads
USER cabletrack
EXPOSE 8000
