"""GET /ui and /ui/<page>: the inspector's shell, a page without data that fetches its fragments with the key
kept in the tab's session storage; and the static files it loads (no CDN, no build step)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from api.ui.render import render
from memory.errors import NotFoundError

__all__ = ["PAGES", "STATIC", "router", "static_files"]

STATIC = "/ui/static"
"""Where the app mounts `static_files()`."""

# page -> its title in the navigation, in the order shown
PAGES = {"namespaces": "Namespaces", "facts": "Facts", "documents": "Documents and turns", "recall": "Recall",
         "context": "Context", "tasks": "Tasks"}

router = APIRouter(include_in_schema=False)


def static_files() -> StaticFiles:
    """The inspector's script, style sheet and icon, shipped inside the package."""
    return StaticFiles(directory=str(files("api.ui") / "static"))


@router.get("/ui")
def home(request: Request, namespace: str = Query(default="default", max_length=128)) -> HTMLResponse:
    """The shell on its first page, the namespaces."""
    return shell(request, "namespaces", namespace)


@router.get("/ui/{name}")
def shell(request: Request, name: str, namespace: str = Query(default="default", max_length=128)) -> HTMLResponse:
    """The shell of one page: navigation, the key prompt, and where the page's fragment goes."""
    if name not in PAGES:
        raise NotFoundError(f"the inspector has no page {name!r}; its pages are {', '.join(PAGES)}")
    return render(request, "shell.html", page=name, pages=PAGES, namespace=namespace)
