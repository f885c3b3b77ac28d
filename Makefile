# Two commands for a fresh machine (see README): `make demo` and `make test`.
# PYTHON makes the virtualenv (.ci/run also tests the newest Python with VENV=.venv-newest
# PYTHON=... EXTRAS=... ); EXTRAS are the extras installed into it.
PYTHON ?= python3
VENV ?= .venv
EXTRAS ?= offline,studio,dev,postgres
PY := $(VENV)/bin/python
# llama.cpp's default native build crashes (SIGSEGV) on CPUs with AVX-512/AMX; these
# flags give a portable build that works on them and everywhere else.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_OPENMP=OFF
export LANGGRAPH_CLI_NO_ANALYTICS = 1
export LANGGRAPH_NO_VERSION_CHECK = true

DEMO_QUESTION ?= Who painted the Mona Lisa?

.PHONY: setup demo test lint bench bench-dump-full bench-offline reliability wheel-smoke clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/wikireact ask --offline "$(DEMO_QUESTION)"

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check src tests bench examples .ci
	$(VENV)/bin/ruff format --check src tests bench examples .ci
	$(VENV)/bin/mypy src/wikireact tests

bench: setup
	cd bench && ../$(PY) run_all.py

# The 2017 abstracts dump at 100k and 1M synthetic pages (the 1M corpus takes ~20 min to
# generate on 2 busy cores, then is cached in the temp folder).
bench-dump-full: setup
	cd bench && ../$(PY) dump_import.py --full

# The embedded model on tests/data/offline_single_hop.json, before/after the small-model
# prompt and the step grammar (tens of minutes on 2 cores: not part of `make bench`).
bench-offline: setup
	cd bench && ../$(PY) offline_eval.py

# Crash and concurrency checks that need several processes (run by CI).
reliability: setup
	cd bench && ../$(PY) kill_resume.py && ../$(PY) kill_resume.py --postgres && ../$(PY) lost_lock.py && ../$(PY) concurrency_stress.py

# The installed wheel, not the checkout: no extras, then [postgres] (see .ci/wheel_smoke.sh).
wheel-smoke:
	bash .ci/wheel_smoke.sh $(PYTHON)

clean:
	rm -rf $(VENV) .venv-newest .pytest_cache .mypy_cache .ruff_cache build
