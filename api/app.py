"""The FastAPI app factory: one router per resource over the Memory library."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import Response

from api.errors import ERROR_RESPONSES, error_response, install_error_handlers
from api.limits import BodyLimit
from api.routers import documents, facts, health, memories, namespaces, recall, tasks
from memory.auth import KeyRing
from memory.config import Config
from memory.metrics import Metrics
from memory.service import Memory

__all__ = ["create_app"]


def create_app(config: Config, memory: Memory | None = None) -> FastAPI:
    """Build the app over `memory` (opened from `config` when not given)."""
    opened = memory or Memory(config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        purger = threading.Thread(target=_purge_until, args=(opened, stop), name="task-purge", daemon=True)
        purger.start()
        try:
            yield
        finally:
            stop.set()
            purger.join(timeout=5)

    app = FastAPI(
        title="context-memory",
        version="1",
        description="Facts, experience and task memory for LLM agents, recalled inside a token budget.",
        lifespan=lifespan,
    )
    app.state.memory = opened
    app.state.keyring = KeyRing(config.auth.keys)
    app.state.metrics = Metrics()
    install_error_handlers(app)
    limit = config.limits.max_request_bytes
    # Added before `guard`, so it runs inside it: the receive it wraps is then not in guard's task group, and its
    # 413 reaches the error table instead of leaving as an ExceptionGroup.
    app.add_middleware(BodyLimit, limit=limit)

    @app.middleware("http")
    async def guard(request: Request, call_next):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            response: Response = error_response(
                413, "TooLarge", f"the request body is over the limit of {limit} bytes (limits.max_request_bytes)"
            )
        else:
            response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        registry: Metrics = app.state.metrics
        registry.requests.labels(path, request.method, str(response.status_code)).inc()
        registry.latency.labels(path).observe(time.perf_counter() - started)
        return response

    app.include_router(health.router)
    for module in (recall, facts, memories, documents, tasks, namespaces):
        app.include_router(module.router, responses=ERROR_RESPONSES)
    return app


def _purge_until(memory: Memory, stop: threading.Event, every_s: float = 60.0) -> None:
    """Remove expired task items in the background (reads also skip them, so this only frees space)."""
    while not stop.wait(every_s):
        memory.tasks.purge_expired()
