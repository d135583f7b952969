FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_STATIC_ROOT=/app/staticfiles
WORKDIR /app
COPY pyproject.toml README.md ./
COPY cabletrack ./cabletrack
COPY inventory ./inventory
COPY templates ./templates
COPY manage.py ./
RUN pip install --no-cache-dir .
RUN useradd -r cabletrack && mkdir -p /data/uploads && chown cabletrack /data/uploads
USER cabletrack
EXPOSE 8000
