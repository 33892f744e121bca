"""The web inspector at /ui: a shell page without data, and server-rendered HTML fragments behind the same keys
and namespace rules as /v1 (each fragment route validates, calls the library, renders). Off with
`[service] ui = false`."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.ui import documents, facts, namespaces, playground, shell, tasks
from api.ui.render import HEADERS

__all__ = ["install"]


def install(app: FastAPI) -> None:
    """Serve the inspector from `app`: its static files, its fragments and its pages (none in the OpenAPI schema)."""
    app.mount(shell.STATIC, shell.static_files(), name="ui-static")
    for module in (namespaces, facts, documents, playground, tasks):
        app.include_router(module.router)
    app.include_router(shell.router)  # last: /ui/{name} must not shadow a fragment route
    app.add_middleware(_Headers)


class _Headers:
    """Every answer under /ui carries the inspector's HEADERS: pages, fragments, static files and errors alike."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path, root = (scope.get("path", ""), scope.get("root_path", "")) if scope["type"] == "http" else ("", "")
        path = path[len(root):] if root and path.startswith(root) else path
        if path != "/ui" and not path.startswith("/ui/"):
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, sending)
