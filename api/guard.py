"""The outermost request wrapper: refuse a declared body over the limit, then count and time every request.

A plain ASGI middleware rather than `@app.middleware("http")`: Starlette's BaseHTTPMiddleware runs the route in a
task group and streams its answer through a memory channel, which costs every request (the recall route most).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_response
from api.metrics import Metrics

__all__ = ["Guard"]


class Guard:
    """413 for a Content-Length over `limit` (before reading anything); request counts and latency by route."""

    def __init__(self, app: ASGIApp, limit: int, metrics: Callable[[], Metrics]) -> None:
        self.app = app
        self.limit = limit
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what an exception escaping the app becomes (ServerErrorMiddleware answers it)

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            declared = dict(scope["headers"]).get(b"content-length")
            if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
                response = error_response(
                    413, "TooLarge",
                    f"the request body is over the limit of {self.limit} bytes (limits.max_request_bytes)",
                )
                await response(scope, receive, sending)
            else:
                await self.app(scope, receive, sending)
        finally:
            path = getattr(scope.get("route"), "path", "unmatched")
            registry = self.metrics()
            registry.requests.labels(path, scope["method"], str(status)).inc()
            registry.latency.labels(path).observe(time.perf_counter() - started)
