"""The web inspector at /ui: a shell page without data, and server-rendered HTML fragments behind the same keys
and namespace rules as /v1 (each fragment route validates, calls the library, renders). Off with
`[service] ui = false`."""

from __future__ import annotations

from fastapi import FastAPI

from api.ui import documents, facts, namespaces, playground, shell, tasks

__all__ = ["install"]


def install(app: FastAPI) -> None:
    """Serve the inspector from `app`: its static files, its fragments and its pages (none in the OpenAPI schema)."""
    app.mount(shell.STATIC, shell.static_files(), name="ui-static")
    for module in (namespaces, facts, documents, playground, tasks):
        app.include_router(module.router)
    app.include_router(shell.router)  # last: /ui/{name} must not shadow a fragment route
