"""The test suite: tests/ mirrors the packages (memory/, api/, ingest/, cli/); security/ and reliability/ try the whole."""

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parent.parent  # the project root: config.toml, the packages, .venv

LOCAL = "http://127.0.0.1:8000"  # without keys the app answers only a loopback Host (api/guard.py)


def local_client(app: Any, **kwargs: Any) -> TestClient:
    """A TestClient that addresses the app as a local caller does (TestClient's own default host is refused)."""
    return TestClient(app, base_url=kwargs.pop("base_url", LOCAL), **kwargs)
