"""The FastAPI app factory: one router per resource over the Memory library."""

from __future__ import annotations

import time

from fastapi import FastAPI, Request
from fastapi.responses import Response

from api.errors import error_response, install_error_handlers
from api.routers import health
from memory.auth import KeyRing
from memory.config import Config
from memory.metrics import Metrics
from memory.service import Memory

__all__ = ["create_app"]


def create_app(config: Config, memory: Memory | None = None) -> FastAPI:
    """Build the app over `memory` (opened from `config` when not given)."""
    app = FastAPI(
        title="context-memory",
        version="1",
        description="Facts, experience and task memory for LLM agents, recalled inside a token budget.",
    )
    app.state.memory = memory or Memory(config)
    app.state.keyring = KeyRing(config.auth.keys)
    app.state.metrics = Metrics()
    install_error_handlers(app)
    limit = config.limits.max_request_bytes

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

    for module in (health,):
        app.include_router(module.router)
    return app
