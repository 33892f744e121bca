"""GET /docs (Swagger UI) and GET /redoc (ReDoc), served with their files from this service, never from a CDN."""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS", "assets", "router"]

ASSETS = "/docs-assets"
"""Where the app mounts `assets()`."""

router = APIRouter(include_in_schema=False)


def assets() -> StaticFiles:
    """Swagger UI's and ReDoc's files as the installed fastapi-offline package ships them."""
    return StaticFiles(directory=str(files("fastapi_offline") / "static"))


def _at(request: Request, path: str) -> str:
    # Behind a proxy that mounts the service under a prefix, the browser asks for the prefixed path.
    return f"{request.scope.get('root_path', '')}{path}"


@router.get("/docs")
async def swagger(request: Request) -> HTMLResponse:
    """The OpenAPI schema in Swagger UI."""
    return get_swagger_ui_html(
        openapi_url=_at(request, request.app.openapi_url), title=f"{request.app.title} - Swagger UI",
        swagger_js_url=_at(request, f"{ASSETS}/swagger-ui-bundle.js"),
        swagger_css_url=_at(request, f"{ASSETS}/swagger-ui.css"),
        swagger_favicon_url=_at(request, f"{ASSETS}/favicon.png"),
        swagger_ui_parameters={"validatorUrl": None},  # never ask swagger.io's online validator either
    )


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    """The OpenAPI schema in ReDoc."""
    return get_redoc_html(
        openapi_url=_at(request, request.app.openapi_url), title=f"{request.app.title} - ReDoc",
        redoc_js_url=_at(request, f"{ASSETS}/redoc.standalone.js"),
        redoc_favicon_url=_at(request, f"{ASSETS}/favicon.png"), with_google_fonts=False,
    )
