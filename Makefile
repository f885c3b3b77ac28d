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

.PHONY: setup demo test docs lint bench bench-dump-full bench-offline bench-offline-configs reliability wheel-smoke clean

# While a long, quiet command runs (pip prints nothing while llama.cpp builds), a line every
# HEARTBEAT_S (whole) seconds shows it is alive; the ticker stops with the command (whose exit
# status is kept), or within one beat of its shell going away (Ctrl-C). `sleep` writes nowhere,
# so a pipe reading make's output closes when the command ends.
HEARTBEAT_S ?= 60
define alive
( s=0; while sleep $(HEARTBEAT_S) >/dev/null 2>&1 && kill -0 $$$$ 2>/dev/null; do s=$$((s + $(HEARTBEAT_S))); \
  echo "  ... still installing ($$((s / 60)) min $$((s % 60)) s)"; done ) & \
tick=$$!; $(1); status=$$?; kill $$tick 2>/dev/null; exit $$status
endef

$(VENV)/.installed: pyproject.toml
	@echo "Setting up $(VENV) with the extras $(EXTRAS): about 140 packages from the package index"
	@echo "(network needed), and llama.cpp (llama-cpp-python) built from source the first time:"
	@echo "11-15 minutes on 2 idle cores, over 30 on a busy machine, during which pip prints nothing"
	@echo "(a line a minute shows it is alive). Later installs reuse pip's wheel cache: a few minutes."
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "$(PY) -m pip install --quiet -e \".[$(EXTRAS)]\""
	@$(call alive,$(PY) -m pip install --quiet -e ".[$(EXTRAS)]")
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/wikireact ask --offline "$(DEMO_QUESTION)"

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The documentation site on http://127.0.0.1:8000 (mkdocs-material; the `docs` extra).
docs: setup
	$(VENV)/bin/mkdocs serve

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

# Every agent with the embedded model on the three offline sets (single-hop, multi-hop, FEVER
# claims), one table (hours on 2 cores: not part of `make bench`); a part of it with e.g.
# BENCH_ARGS="--sets multi --agents react --limit 3 --out runs" (the same --out resumes).
bench-offline: setup
	cd bench && ../$(PY) offline_table.py $(BENCH_ARGS)

# ReAct with the embedded model on tests/data/offline_single_hop.json, before/after the
# small-model prompt and the step grammar (tens of minutes on 2 cores).
bench-offline-configs: setup
	cd bench && ../$(PY) offline_eval.py

# Crash and concurrency checks that need several processes (run by CI).
reliability: setup
	cd bench && ../$(PY) kill_resume.py && ../$(PY) kill_resume.py --postgres && ../$(PY) lost_lock.py && ../$(PY) concurrency_stress.py

# The installed wheel, not the checkout: no extras, then [postgres] (see .ci/wheel_smoke.sh).
wheel-smoke:
	bash .ci/wheel_smoke.sh $(PYTHON)

clean:
	rm -rf $(VENV) .venv-newest .pytest_cache .mypy_cache .ruff_cache build
