"""The test suite: tests/ mirrors the packages (memory/, api/, ingest/, cli/); security/ and reliability/ try the whole."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the project root: config.toml, the packages, .venv
