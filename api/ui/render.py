"""The inspector's templates (Jinja2, every value escaped), the headers every /ui answer carries (api.ui adds
them), the guard of its fragment routes, and the checks that turn form fields into a library call's arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypeVar
from urllib.parse import urlencode

from fastapi import Form, HTTPException, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from api.errors import field_problems
from memory.errors import ValidationError

__all__ = ["HEADERS", "FormField", "guard", "number", "optional", "render", "validated", "whole"]

# Scripts, styles and images from the service itself only, nothing inline: even a value that escaped escaping
# could run nothing. The page is never framed, and fragments (the data) are never cached.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_M = TypeVar("_M", bound=BaseModel)

FormField = Annotated[str, Form()]
"""A field of a posted form, as typed; its checks are the library's (or `whole` / `number` / `validated`)."""

# autoescape=True for every template whatever its name: nothing a user stored reaches the page unescaped.
_TEMPLATES = Environment(loader=PackageLoader("api.ui", "templates"), autoescape=True, undefined=StrictUndefined,
                         trim_blocks=True, lstrip_blocks=True)


def _link(root: str, path: str, **params: Any) -> str:
    """`root + path` with the parameters that are set, percent-encoded (ids may hold '/', '&' or Chinese)."""
    query = urlencode({k: v for k, v in params.items() if v is not None and v != ""})
    return f"{root}{path}" + (f"?{query}" if query else "")


def render(request: Request, name: str, **context: Any) -> HTMLResponse:
    """Template `name` with `context`, `root` (the service's mount point) and `link` (a URL builder) added."""
    root = str(request.scope.get("root_path", ""))

    def link(path: str, **params: Any) -> str:
        return _link(root, path, **params)

    html = _TEMPLATES.get_template(name).render(root=root, link=link, **context)
    return HTMLResponse(html)  # HEADERS are added to every /ui answer (api.ui._Headers)


async def guard(request: Request) -> None:
    """Refuse a fragment request the inspector's script did not send.

    The script always sends `X-Inspector: 1`: another site's page cannot add that header without a CORS preflight,
    which this service never grants, so it cannot submit a form here. (A page that renamed itself to this
    address is refused for every route by api/guard.py when no keys are configured.)
    """
    if request.headers.get("x-inspector") != "1":
        raise HTTPException(403, "inspector fragments are fetched by the /ui page's script (header X-Inspector: 1); "
                                 "open /ui in a browser, or use the REST API under /v1")


def validated(model: type[_M], fields: Mapping[str, Any]) -> _M:
    """`model` built from the form's fields, or ValidationError naming each field at fault (the API's wording)."""
    try:
        return model.model_validate(dict(fields))
    except PydanticValidationError as exc:
        raise ValidationError("invalid request: " + field_problems(exc.errors())) from None


def optional(value: str | None) -> str | None:
    """A form field as sent, or None when it was left empty."""
    return value.strip() or None if value is not None else None


def whole(value: str | None, name: str) -> int | None:
    """An optional whole number typed into a form field; ValidationError for anything else."""
    text = optional(value)
    if text is None:
        return None
    try:
        return int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise ValidationError(f"{name} must be a whole number, got {text[:40]!r}") from None


def number(value: str | None, name: str) -> float | None:
    """An optional number typed into a form field; ValidationError for anything else."""
    text = optional(value)
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise ValidationError(f"{name} must be a number, got {text[:40]!r}") from None
