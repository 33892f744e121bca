"""What a `memory` command asks of the store, one way whoever holds it.

A command opens a session and makes one call: `Local` when the command opens the store itself (the `Memory`
facade), `Remote` when a server holds it (embedded Chroma serves one process, memory.lock) and the command asks
that server through the typed client, `memory_client.Client`, with a key from MEMORY_API_KEY or, failing that, the
first configured key that may use the namespace. Both answer the REST contract's JSON objects (docs/api.md): the
local one forms them with the service's own public schemas, the remote one is given them, so a command prints the
same either way.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

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

if TYPE_CHECKING:
    from api.schemas.context import ContextRequest
    from ingest.pipeline import FileOutcome, PassageCount
    from memory.service import Memory
    from memory_client import Client, MemoryClientError

__all__ = ["Local", "Remote", "Session", "server_key"]

Json = dict[str, Any]  # a REST answer's JSON object


class Session(Protocol):
    """The calls the commands make; each answers what the REST endpoint of the same name answers."""

    url: str | None  # the server asked, None for the store opened here

    def health(self) -> Json:
        """GET /healthz."""

    def recall(self, namespace: str, query: str, budget: int, task_id: str | None, min_score: float | None) -> Json:
        """POST /v1/recall."""

    def context(self, request: ContextRequest) -> Json:
        """POST /v1/context."""

    def pin(self, namespace: str, text: str) -> Json:
        """POST /v1/facts/pin."""

    def facts(self, namespace: str) -> list[Json]:
        """GET /v1/facts: the facts."""

    def search(self, namespace: str, query: str, k: int) -> Json:
        """POST /v1/search."""

    def ingest(self, namespace: str, paths: Sequence[str], *, project: str | None, tags: tuple[str, ...],
               replace: bool, progress: Callable[[FileOutcome], None], passages: Callable[[PassageCount], None],
               stage: Callable[[str], None]) -> list[FileOutcome]:
        """Store the files under `paths` as ingest.pipeline.ingest_paths does; `stage` says what a job is doing."""

    def close(self) -> None:
        """Let go of the store or the connection."""


class Local:
    """The store opened by this process."""

    url: str | None = None

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def close(self) -> None:
        """Close the store."""
        self.memory.close()

    def health(self) -> Json:
        """What GET /healthz answers a key that may see everything."""
        return {"status": "ok", **asdict(self.memory.health())}

    def recall(self, namespace: str, query: str, budget: int, task_id: str | None, min_score: float | None) -> Json:
        """The recall's public form."""
        from api.schemas.recall import RecallPublic

        found = self.memory.recall(namespace, query, budget, task_id=task_id, min_score=min_score)
        return RecallPublic.of(found).model_dump(mode="json")

    def context(self, request: ContextRequest) -> Json:
        """The packed turn's public form."""
        from api.schemas.context import ContextPublic

        return ContextPublic.of(self.memory.context(request.turn(request.namespace))).model_dump(mode="json")

    def pin(self, namespace: str, text: str) -> Json:
        """The pin's public form."""
        from api.schemas.facts import FactChangePublic

        return FactChangePublic.of(self.memory.facts.pin(namespace, text=text)).model_dump(mode="json")

    def facts(self, namespace: str) -> list[Json]:
        """The facts' public forms, pinned first."""
        from api.schemas.facts import FactPublic

        return [FactPublic.of(f).model_dump(mode="json") for f in self.memory.facts.list_facts(namespace)]

    def search(self, namespace: str, query: str, k: int) -> Json:
        """The explained search's public form."""
        from api.schemas.search import SearchPublic

        return SearchPublic.of(self.memory.experience.explain(namespace, query, k)).model_dump(mode="json")

    def ingest(self, namespace: str, paths: Sequence[str], *, project: str | None, tags: tuple[str, ...],
               replace: bool, progress: Callable[[FileOutcome], None], passages: Callable[[PassageCount], None],
               stage: Callable[[str], None]) -> list[FileOutcome]:
        """The pipeline, in this process."""
        from ingest.pipeline import ingest_paths

        return ingest_paths(self.memory, namespace, paths, project=project, tags=tags, replace=replace,
                            progress=progress, passages=passages)


class Remote:
    """The server at `url` that holds the store, through the typed client; its errors become the library's."""

    def __init__(self, url: str, config: Config, namespace: str | None = None, timeout_s: float = 600.0) -> None:
        from memory_client import Client  # here: a command that opens the store itself never loads the HTTP client

        self.url: str | None = url
        self._client: Client = Client(url, api_key=server_key(config, namespace) or "", timeout=timeout_s)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def health(self) -> Json:
        """GET /healthz."""
        return self._raw(self._client.health)

    def recall(self, namespace: str, query: str, budget: int, task_id: str | None, min_score: float | None) -> Json:
        """POST /v1/recall."""
        return self._raw(self._client.recall, query, budget=budget, task_id=task_id, min_score=min_score,
                         namespace=namespace)

    def context(self, request: ContextRequest) -> Json:
        """POST /v1/context with the fields the request was given."""
        fields = request.model_dump(mode="json", exclude_unset=True)
        fields.pop("namespace", None)
        return self._raw(self._client.context, fields.pop("messages"), namespace=request.namespace, **fields)

    def pin(self, namespace: str, text: str) -> Json:
        """POST /v1/facts/pin."""
        return self._raw(self._client.pin, text, namespace=namespace)

    def facts(self, namespace: str) -> list[Json]:
        """GET /v1/facts."""
        return list(self._raw(self._client.list_facts, namespace=namespace)["facts"])

    def search(self, namespace: str, query: str, k: int) -> Json:
        """POST /v1/search."""
        return self._raw(self._client.search, query, k=k, namespace=namespace)

    def ingest(self, namespace: str, paths: Sequence[str], *, project: str | None, tags: tuple[str, ...],
               replace: bool, progress: Callable[[FileOutcome], None], passages: Callable[[PassageCount], None],
               stage: Callable[[str], None]) -> list[FileOutcome]:
        """The pipeline's walk, each file uploaded under the name ingest_paths would give it (ingest.identity); a
        file the server takes as a job is followed until it ends, its chunks moving the passages."""
        from ingest.loaders import iter_paths
        from ingest.pipeline import FileOutcome, PassageEstimate, kept_message
        from memory.experience import DocumentResult

        found = list(iter_paths(paths))
        estimate = PassageEstimate(found)
        done = 0
        outcomes = []
        for index, found_path in enumerate(found):
            if found_path.skip_reason:
                outcome = FileOutcome(str(found_path.path), skipped=found_path.skip_reason)
            else:
                name = found_path.name or found_path.path.name

                def embedded(chunks: int, before: int = done) -> None:
                    passages(estimate.count(before + chunks))

                try:
                    answer = self._upload(namespace, found_path.path, name, replace=replace, project=project,
                                          tags=tags, stage=stage, embedded=embedded)
                    outcome = FileOutcome(str(found_path.path), results=(
                        DocumentResult(answer["doc_id"], answer["chunks"], answer["status"]),))
                except ConflictError:
                    outcome = FileOutcome(str(found_path.path), error=kept_message(name, namespace))
                except MemoryError_ as exc:
                    outcome = FileOutcome(str(found_path.path), error=str(exc))
            given = sum(r.chunks for r in outcome.results)
            estimate.add(index, given)
            done += given
            outcomes.append(outcome)
            progress(outcome)
            passages(estimate.count(done))
        return outcomes

    def _upload(self, namespace: str, path: Path, name: str, *, replace: bool, project: str | None,
                tags: tuple[str, ...], stage: Callable[[str], None], embedded: Callable[[int], None]) -> Json:
        """POST /v1/documents as a file upload named `name`; a 202 job is followed until it ends."""
        from ingest.loaders import file_mtime
        from memory.clock import to_iso

        # The file's own time, as `memory ingest` on the store would read it (not the time of the upload).
        answer = self._raw(self._client.upload_document, path, filename=name, namespace=namespace,
                           doc_id=name if replace else None, project=project or None, tags=tags or None,
                           modified_at=to_iso(file_mtime(path)))
        while answer.get("state") in ("queued", "running"):
            share = f"{answer['done']}/{answer['total']}" if answer["total"] else "waiting"
            stage(f"job {answer['job_id']}: {answer['stage']} {share}")
            if answer["stage"] == "embedding":
                embedded(int(answer["done"]))
            time.sleep(0.5)
            answer = self._raw(self._client.get_job, answer["job_id"], namespace=namespace)
        if "job_id" not in answer:
            return answer
        if answer["state"] != "done":
            error = ConflictError if answer.get("error") == "Conflict" else ValidationError
            raise error(answer.get("detail") or f"the ingest job {answer['job_id']} ended {answer['state']}")
        return {"doc_id": answer["doc_id"], "chunks": answer["chunks"], "status": answer["status"]}

    def _raw(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Json:
        """The JSON object the call's answer was built from; a client error as the library's error family."""
        from memory_client import MemoryClientError

        try:
            return dict(call(*args, **kwargs).raw)
        except MemoryClientError as exc:
            raise self._error(exc) from None

    def _error(self, exc: MemoryClientError) -> MemoryError_:
        from memory_client import APIError, Conflict, NotFound, TooLarge, Unauthorized, ValidationFailed

        if not isinstance(exc, APIError):  # no answer: refused, timed out, not the service
            return StoreError(f"the server holding the store at {self.url} did not answer ({exc}); if it has "
                              "stopped, run the command again")
        kinds: dict[type[APIError], type[MemoryError_]] = {
            Unauthorized: AuthError, NotFound: NotFoundError, Conflict: ConflictError, TooLarge: TooLargeError,
            ValidationFailed: ValidationError}
        kind = next((mine for theirs, mine in kinds.items() if isinstance(exc, theirs)),
                    AuthError if exc.status == 403 else StoreError)
        return kind(f"the server at {self.url} answered {exc.status}: {exc.detail}")


def server_key(config: Config, namespace: str | None) -> str | None:
    """The key to send a running server: MEMORY_API_KEY, else the first configured key that may use `namespace`."""
    return os.environ.get("MEMORY_API_KEY") or _configured_key(config, namespace)


def _configured_key(config: Config, namespace: str | None) -> str | None:
    """The first key of the configuration that may use `namespace` (any key when no namespace is involved)."""
    from api.auth import KeyRing

    for key, patterns in config.auth.keys.items():
        if namespace is None or KeyRing.allows(tuple(patterns), namespace):
            return key
    return None


def open_session(config: Config, command: str, namespace: str | None) -> Session:
    """The store (a Memory whose model loads only when the command embeds), or the server that holds it."""
    from memory.errors import StoreBusyError
    from memory.lock import holder_of

    holder = holder_of(config.data_path.resolve())
    if holder is not None and holder.url:  # a server holds the store: ask it, without loading the library
        return Remote(holder.url, config, namespace)
    from memory.embedding import lazy_embedder
    from memory.service import Memory
    from memory.store import stored_identity

    stored = stored_identity(config)
    try:
        return Local(Memory(config, embedder=lazy_embedder(config.embedding, stored.embedder if stored else None),
                            command=command))
    except StoreBusyError as exc:
        if not exc.url:
            raise
        return Remote(exc.url, config, namespace)
