"""The FastAPI app factory: one router per resource over the Memory library."""

from __future__ import annotations

import gc
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.routing import Route

from api.auth import KeyRing
from api.errors import ERROR_RESPONSES, install_error_handlers
from api.guard import Guard
from api.limits import BodyLimit
from api.mcp.server import MCP_PATH, McpEndpoint
from api.metrics import Metrics
from api.routers import context, docs, documents, facts, health, jobs, memories, namespaces, recall, search, tasks
from api.ui import install as install_ui
from memory.config import Config
from memory.service import Memory

__all__ = ["create_app"]


def create_app(config: Config, memory: Memory | None = None) -> FastAPI:
    """Build the app over `memory` (opened from `config` as `memory serve` opens it when not given)."""
    opened = memory or Memory(config, command="serve")
    keyring = KeyRing(config.auth.keys)
    mcp = McpEndpoint(opened, keyring, host=config.service.host, max_body_bytes=config.limits.max_request_bytes)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        purger = threading.Thread(target=_purge_until, args=(opened, stop), name="task-purge", daemon=True)
        purger.start()
        # What start-up loaded (model, tokenizer, jieba's dictionary) lives as long as the process. Frozen, it is
        # no longer walked by each full garbage collection, which otherwise stalls the occasional request for as
        # long as that walk takes.
        gc.freeze()
        try:
            async with mcp.running():
                yield
        finally:
            stop.set()
            purger.join(timeout=5)
            if memory is None:  # a Memory passed in belongs to the caller, who closes it
                # Stops the ingest worker (a job cut short runs again on the next start), checkpoints SQLite
                # and gives the store up for the next process.
                opened.close()

    app = FastAPI(
        title="context-memory",
        version="1",
        description="Facts, experience and task memory for LLM agents, recalled inside a token budget.",
        lifespan=lifespan,
        docs_url=None,  # api/routers/docs.py serves /docs and /redoc with local files instead of a CDN's
        redoc_url=None,
    )
    app.state.memory = opened
    app.state.keyring = keyring
    app.state.metrics = Metrics()
    install_error_handlers(app)
    limit = config.limits.max_request_bytes
    # Added before Guard, so it runs inside it: its 413 for a body that streams past the limit reaches the error
    # table; Guard refuses a declared Content-Length over the limit before anything is read.
    app.add_middleware(BodyLimit, limit=limit)
    app.add_middleware(Guard, limit=limit, metrics=lambda: app.state.metrics, loopback_only=not keyring.enabled)

    app.include_router(health.router)
    app.include_router(docs.router)
    app.mount(docs.ASSETS, docs.assets(), name="docs-assets")
    for module in (recall, context, search, facts, memories, documents, jobs, tasks, namespaces):
        app.include_router(module.router, responses=ERROR_RESPONSES)
    # The MCP tools over streamable HTTP, behind the same keys and namespace rules (api/mcp/); not in the OpenAPI
    # schema, which describes the REST routes.
    app.router.routes.append(Route(MCP_PATH, mcp))
    if config.service.ui:  # the web inspector (api/ui/); off, /ui answers 404 like any unknown route
        install_ui(app)
    return app


def _purge_until(memory: Memory, stop: threading.Event, every_s: float = 60.0) -> None:
    """Remove expired task items in the background (reads also skip them, so this only frees space)."""
    while not stop.wait(every_s):
        memory.tasks.purge_expired()
