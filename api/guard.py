"""The outermost request wrapper: refuse a request for another host name while no keys guard the service (DNS
rebinding) and a declared body over the limit, then count and time every request.

A plain ASGI middleware rather than `@app.middleware("http")`: Starlette's BaseHTTPMiddleware runs the route in a
task group and streams its answer through a memory channel, which costs every request (the recall route most).
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_response
from api.metrics import Metrics

__all__ = ["HEAVY_BYTES", "Guard", "loopback_host", "loopback_origin"]


def loopback_host(host: str) -> bool:
    """Whether a Host header names this machine: "localhost", "127.0.0.1:8000", "[::1]", "[::1]:8000"."""
    name = host.strip().lower()
    if name.startswith("["):  # an IPv6 address, with or without a port after the bracket
        name = name[1:].split("]", 1)[0]
    elif name.count(":") == 1:  # a name or IPv4 address with its port
        name = name.split(":", 1)[0]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def loopback_origin(origin: str) -> bool:
    """Whether an Origin header names a page served from this machine ("http://localhost:3000"); "null" (a
    sandboxed frame, a file) does not."""
    try:
        parts = urlsplit(origin.strip())
        return parts.scheme in ("http", "https") and parts.hostname is not None and loopback_host(parts.hostname)
    except ValueError:
        return False


_REBOUND = ("with no API keys configured the service answers requests addressed to a loopback name only "
            "(127.0.0.1, localhost or [::1], any port), got Host {host!r}; configure [auth.keys] to reach it by "
            "another name")


_CROSS_SITE = ("with no API keys configured the service takes writes from this machine's own pages and programs "
               "only, and this {method} came from a page at {origin!r} (a browser sends any site's form here); "
               "configure [auth.keys] to accept writes from other origins, with a key")
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
# A body this large is text to read (a document, a tool result, a long turn), and reading text holds the interpreter
# for its time slices: several at once slow every other caller's request many times over. They run one after
# another, and the smaller requests (recalls, facts, most turns) go on beside them.
HEAVY_BYTES = 256 * 1024


class Guard:
    """403 for a Host that is not loopback while `loopback_only`; 413 for a Content-Length over `limit` (before
    reading anything); request counts and latency by route.

    Without keys the service listens on loopback and answers anyone on this machine, a web page in the user's
    browser included. Such a page cannot read another origin's answers, but one whose name an attacker re-points at
    127.0.0.1 (DNS rebinding) is same-origin with it; its requests still carry its own name in Host, so they are
    refused here. A page on any other site can still send a form here (a POST of a form or of plain text needs no
    permission from us), and the browser names that page in Origin: while `loopback_only`, a write whose Origin is
    not a page of this machine is refused. With keys, the key guards (a page cannot send it), and a reverse proxy's
    own name must pass. A request with two Host headers is refused: which one a proxy read is anybody's guess.
    """

    def __init__(self, app: ASGIApp, limit: int, metrics: Callable[[], Metrics], loopback_only: bool = False) -> None:
        self.app = app
        self.limit = limit
        self.metrics = metrics
        self.loopback_only = loopback_only
        self._heavy = threading.Lock()

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
            headers = dict(scope["headers"])
            host = headers.get(b"host", b"").decode("latin-1")
            origin = headers.get(b"origin", b"").decode("latin-1")
            declared = headers.get(b"content-length")
            hosts = sum(1 for name, _ in scope["headers"] if name == b"host")
            if hosts > 1:
                await error_response(400, "BadRequest", f"the request has {hosts} Host headers; send one")(
                    scope, receive, sending)
            elif self.loopback_only and not loopback_host(host):
                await error_response(403, "Forbidden", _REBOUND.format(host=host[:100]))(scope, receive, sending)
            elif self.loopback_only and origin and scope["method"] not in _SAFE and not loopback_origin(origin):
                refusal = _CROSS_SITE.format(method=scope["method"], origin=origin[:100])
                await error_response(403, "Forbidden", refusal)(scope, receive, sending)
            elif declared is not None and (not declared.isdigit() or int(declared) > self.limit):
                response = error_response(
                    413, "TooLarge",
                    f"the request body is over the limit of {self.limit} bytes (limits.max_request_bytes)",
                )
                await response(scope, receive, sending)
            else:
                if declared is not None and int(declared) > HEAVY_BYTES:
                    # One at a time (HEAVY_BYTES). A thread's lock, as a test client runs each call in a loop of its
                    # own, taken without blocking: a caller that goes away while it waits holds nothing.
                    while not self._heavy.acquire(blocking=False):
                        await anyio.sleep(0.01)
                    try:
                        await self.app(scope, receive, sending)
                    finally:
                        self._heavy.release()
                else:
                    await self.app(scope, receive, sending)
        finally:
            path = getattr(scope.get("route"), "path", "unmatched")
            registry = self.metrics()
            registry.requests.labels(path, scope["method"], str(status)).inc()
            registry.latency.labels(path).observe(time.perf_counter() - started)
