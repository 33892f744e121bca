"""The real service for a benchmark: started as a subprocess (or reached at a URL), spoken to over the v1 contract."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench._recall_data import Turn

__all__ = ["LibraryService", "Service", "ServiceError", "library_service", "running_service"]

_ROOT = Path(__file__).resolve().parent.parent
_MEMORY = _ROOT / ".venv" / "bin" / "memory"
BATCH = 200


class ServiceError(Exception):
    """The service answered with an error, or could not be started or reached."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Service:
    """An httpx client over one service; every non-2xx answer raises ServiceError with the error JSON."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url.rstrip("/")
        self._http = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(900.0, connect=10.0))

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ServiceError(f"{method} {self.url}{path} failed: {exc!r}") from exc
        if response.status_code >= 400:
            try:
                detail = json.dumps(response.json(), ensure_ascii=False)
            except ValueError:
                detail = response.text[:2000]
            raise ServiceError(f"{method} {path} answered {response.status_code}: {detail}")
        return response.json()

    def health(self) -> dict[str, Any]:
        """GET /healthz."""
        result: dict[str, Any] = self._call("GET", "/healthz")
        return result

    def store_turns(self, namespace: str, turns: Sequence[Turn]) -> int:
        """POST /v1/memories in batches of at most 200; returns how many the service stored."""
        stored = 0
        for start in range(0, len(turns), BATCH):
            messages = [
                {"text": t.text, "speaker": t.speaker, "timestamp": t.timestamp, "metadata": dict(t.metadata)}
                for t in turns[start:start + BATCH]
            ]
            stored += int(self._call("POST", "/v1/memories", {"namespace": namespace, "messages": messages})["stored"])
        return stored

    def recall(self, namespace: str, query: str, budget: int) -> dict[str, Any]:
        """POST /v1/recall; the whole answer."""
        result: dict[str, Any] = self._call(
            "POST", "/v1/recall", {"namespace": namespace, "query": query, "budget": budget}
        )
        return result

    def wait_healthy(self, seconds: float, process: subprocess.Popen[bytes] | None = None) -> None:
        """Poll /healthz until it answers 200, the process dies, or `seconds` pass."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                raise ServiceError(f"the service exited with status {process.returncode} before answering /healthz")
            try:
                if self._http.get("/healthz", timeout=5.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise ServiceError(f"{self.url}/healthz did not answer 200 within {seconds:.0f}s")

    def close(self) -> None:
        """Close the HTTP client."""
        self._http.close()


@contextmanager
def running_service(url: str | None, config_toml: str = "", log: Path | None = None,
                    data_dir: Path | None = None) -> Iterator[Service]:
    """The service at `url`, or a `memory serve` on a free port, always stopped after.

    The started service keeps its store in `data_dir` (left in place) or in a temporary folder (removed).
    """
    if url:
        service = Service(url)
        try:
            service.wait_healthy(10.0)
            yield service
        finally:
            service.close()
        return
    workdir = Path(tempfile.mkdtemp(prefix="recall-quality-"))
    config = workdir / "config.toml"
    config.write_text(config_toml, encoding="utf-8")
    port = _free_port()
    log = log or workdir / "server.log"
    data = data_dir or workdir / "data"
    command = [str(_MEMORY), "serve", "--data", str(data), "--port", str(port), "--config", str(config)]
    with log.open("wb") as out:
        # The console script may not see the project root (where api/ lives) on its path; put it there.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=_ROOT, env=env)
    service = Service(f"http://127.0.0.1:{port}")
    try:
        print(f"started `memory serve` (pid {process.pid}) on port {port}, data in {workdir}", file=sys.stderr)
        try:
            service.wait_healthy(180.0, process)
        except ServiceError as exc:
            raise ServiceError(f"{exc}; server log:\n{log.read_text(errors='replace')[-3000:]}") from None
        yield service
    finally:
        service.close()
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


class LibraryService:
    """The same calls answered in-process by a Memory: for quick iterations on ranking (vectors from the cache).

    Not the service: no HTTP, no JSON; the figures in bench/RESULTS.md come from the real server.
    """

    def __init__(self, memory: Any, ledger: Path | None = None) -> None:
        self._memory = memory
        # The namespaces stored whole by an earlier run on a kept data dir, one per line with their turn count.
        self._ledger = ledger
        self._stored = dict(line.rsplit(" ", 1) for line in ledger.read_text().splitlines()) \
            if ledger is not None and ledger.exists() else {}

    def store_turns(self, namespace: str, turns: Sequence[Turn]) -> int:
        """Memory.remember of every turn, in batches of at most 200 (none when a kept store already holds them)."""
        from memory.experience import MemoryTurn

        if namespace in self._stored:
            return int(self._stored[namespace])
        stored = 0
        for start in range(0, len(turns), BATCH):
            results, _ = self._memory.remember(namespace, [
                MemoryTurn(text=t.text, speaker=t.speaker, timestamp=t.timestamp, metadata=dict(t.metadata))
                for t in turns[start:start + BATCH]
            ])
            stored += len(results)
        if self._ledger is not None:
            with self._ledger.open("a", encoding="utf-8") as ledger:
                ledger.write(f"{namespace} {stored}\n")
        return stored

    def recall(self, namespace: str, query: str, budget: int) -> dict[str, Any]:
        """Memory.recall, shaped like the fields of the REST answer that the benchmark reads."""
        result = self._memory.recall(namespace, query, budget)
        items = [{"tier": i.snippet.tier, "id": i.snippet.id, "doc_id": i.snippet.doc_id, "text": i.text,
                  "metadata": dict(i.snippet.metadata)} for i in result.items]
        return {"items": items, "used_tokens": result.used_tokens}


@contextmanager
def library_service(config_toml: str = "", keep: Path | None = None) -> Iterator[LibraryService]:
    """A Memory on a temporary data dir whose embedder caches vectors in bench/.cache.

    With `keep`, the data dir is that folder and stays: a later run with the same folder finds the histories it
    stored (LibraryService.store_turns skips them), so changes to ranking are re-measured without re-ingesting.
    Only for code that does not change what ingestion stores.
    """
    from bench.embed_cache import CachedEmbedder
    from memory.config import load_config
    from memory.embedding import load_embedder
    from memory.service import Memory

    workdir = keep or Path(tempfile.mkdtemp(prefix="recall-library-"))
    workdir.mkdir(parents=True, exist_ok=True)
    config_file = workdir / "config.toml"
    config_file.write_text(config_toml, encoding="utf-8")
    config = load_config(config_file).replace("service", data_dir=str(workdir / "data"))
    embedder = CachedEmbedder(load_embedder(config.embedding))
    try:
        with Memory(config, embedder=embedder) as memory:  # type: ignore[arg-type]
            yield LibraryService(memory, workdir / "stored.txt" if keep else None)
    finally:
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
