# The front door. Needs only Python 3.11+ and make.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
DEMO_GPUS ?= 256
ADDR ?= 127.0.0.1:8000

.PHONY: install run test bench lint check clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo --gpus $(DEMO_GPUS) --seed 1
	$(BIN)/python manage.py ensure_user demo --password demo-cabletrack --role admin --superuser
	@echo ""
	@echo "  cabletrack: http://$(ADDR)/   login: demo / demo-cabletrack"
	@echo ""
	$(BIN)/python manage.py runstack --addr $(ADDR)

# Everything but the fault tests in parallel, then the fault tests (they start, stop and kill
# their own private servers and workers) in one process. Exit 5 (nothing selected) is fine for
# either half when PYTEST_ARGS narrows the run; pytest's own summary line ends the output.
test: install
	$(BIN)/python -m pytest -n $${PYTEST_WORKERS:-2} -m "not fault" $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc
	$(BIN)/python -m pytest -n 0 -m fault $(PYTEST_ARGS); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 5 ] || exit $$rc

bench: install
	$(BIN)/python -m bench $(BENCH_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check . || true

check: install
	$(BIN)/python manage.py check
	$(BIN)/python manage.py makemigrations --check --dry-run
	DJANGO_DEBUG=false DJANGO_SECRET_KEY=$$(head -c 48 /dev/urandom | base64) \
	  DATABASE_URL=$${DATABASE_URL:-sqlite:///var/check.sqlite3} REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/0} \
	  DJANGO_ALLOWED_HOSTS=cabletrack.example.com \
	  $(BIN)/python manage.py check --deploy --fail-level WARNING

clean:
	rm -rf var .pytest_cache
