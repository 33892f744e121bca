"""The `memory` commands' way to a running server: when a server holds the store, they speak its REST API.

Embedded Chroma serves one process (memory.lock), so a command run beside `memory serve` on the same data folder
cannot open the store; it sends the same request a client would, with a key from MEMORY_API_KEY or, failing
that, the first configured key that may use the namespace.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from api.auth import KeyRing
from memory.clock import to_iso
from memory.config import Config
from memory.errors import (
    AuthError,
    ConflictError,
    MemoryError_,
    NotFoundError,
    StoreError,
    TooLargeError,
    ValidationError,
)

__all__ = ["Remote", "server_key"]

_ERRORS: dict[int, type[MemoryError_]] = {401: AuthError, 403: AuthError, 404: NotFoundError, 409: ConflictError,
                                          413: TooLargeError, 422: ValidationError}


class Remote:
    """The REST calls the CLI makes, answering the same JSON bodies as the library's public forms."""

    def __init__(self, url: str, config: Config, namespace: str | None = None, timeout_s: float = 600.0) -> None:
        import httpx  # here: a command that opens the store itself never loads the HTTP client

        self.url = url
        key = server_key(config, namespace)
        headers = {"authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(base_url=url, headers=headers, timeout=timeout_s)

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def health(self) -> dict[str, Any]:
        """GET /healthz."""
        return self._call("GET", "/healthz")

    def recall(self, namespace: str, query: str, budget: int, task_id: str | None,
               min_score: float | None) -> dict[str, Any]:
        """POST /v1/recall."""
        body = {"namespace": namespace, "query": query, "budget": budget, "task_id": task_id, "min_score": min_score}
        return self._call("POST", "/v1/recall", json={k: v for k, v in body.items() if v is not None})

    def context(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST /v1/context with a whole request body."""
        return self._call("POST", "/v1/context", json=dict(body))

    def pin(self, namespace: str, text: str) -> dict[str, Any]:
        """POST /v1/facts/pin."""
        return self._call("POST", "/v1/facts/pin", json={"namespace": namespace, "text": text})

    def search(self, namespace: str, query: str, k: int) -> dict[str, Any]:
        """POST /v1/search."""
        return self._call("POST", "/v1/search", json={"namespace": namespace, "query": query, "k": k})

    def facts(self, namespace: str) -> dict[str, Any]:
        """GET /v1/facts."""
        return self._call("GET", "/v1/facts", params={"namespace": namespace})

    def upload(self, namespace: str, path: Path, name: str, *, replace: bool, project: str | None,
               tags: tuple[str, ...], progress: Callable[[Mapping[str, Any]], None]) -> dict[str, Any]:
        """POST /v1/documents as a file upload named `name`; a 202 job is followed until it ends."""
        # The file's own time, as `memory ingest` on the store would read it (not the time of the upload).
        from ingest.loaders.base import file_mtime

        fields: dict[str, Any] = {"namespace": namespace, "modified_at": to_iso(file_mtime(path))}
        if replace:
            fields["doc_id"] = name
        if project:
            fields["project"] = project
        if tags:
            fields["tags"] = list(tags)
        with path.open("rb") as handle:
            answer = self._call("POST", "/v1/documents", data=fields, files={"file": (name, handle)})
        if "job_id" not in answer:
            return answer
        return self._follow(namespace, answer, progress)

    def _follow(self, namespace: str, job: dict[str, Any],
                progress: Callable[[Mapping[str, Any]], None]) -> dict[str, Any]:
        while job["state"] in ("queued", "running"):
            progress(job)
            time.sleep(0.5)
            job = self._call("GET", f"/v1/jobs/{job['job_id']}", params={"namespace": namespace})
        progress(job)
        if job["state"] != "done":
            error = ConflictError if job.get("error") == "Conflict" else ValidationError
            raise error(job.get("detail") or f"the ingest job {job['job_id']} ended {job['state']}")
        return {"doc_id": job["doc_id"], "chunks": job["chunks"], "status": job["status"]}

    def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        import httpx

        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise StoreError(f"the server holding the store at {self.url} did not answer ({exc}); if it has "
                             "stopped, run the command again") from None
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text[:200]}
        if response.status_code >= 400:
            detail = body.get("detail") if isinstance(body, dict) else None
            error = _ERRORS.get(response.status_code, StoreError)
            raise error(f"the server at {self.url} answered {response.status_code}: {detail or response.text[:200]}")
        return cast(dict[str, Any], body)  # every route the CLI calls answers a JSON object


def server_key(config: Config, namespace: str | None) -> str | None:
    """The key to send a running server: MEMORY_API_KEY, else the first configured key that may use `namespace`."""
    return os.environ.get("MEMORY_API_KEY") or _configured_key(config, namespace)


def _configured_key(config: Config, namespace: str | None) -> str | None:
    """The first key of the configuration that may use `namespace` (any key when no namespace is involved)."""
    for key, patterns in config.auth.keys.items():
        if namespace is None or KeyRing.allows(tuple(patterns), namespace):
            return key
    return None
