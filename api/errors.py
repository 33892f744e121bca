"""The one table from library errors to HTTP statuses, and the JSON error body of API.md."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from memory import errors

__all__ = ["ERROR_RESPONSES", "ErrorPublic", "error_response", "install_error_handlers"]


class ErrorPublic(BaseModel):
    """Every error answer: a short name and a sentence a person understands."""

    error: str
    detail: str


# Documented on every /v1 route, so the OpenAPI schema describes the error bodies clients really get.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorPublic, "description": "API key missing or unknown"},
    404: {"model": ErrorPublic, "description": "unknown id, task or document, or another key's namespace"},
    413: {"model": ErrorPublic, "description": "over a size limit (limits.*)"},
    422: {"model": ErrorPublic, "description": "invalid input"},
}

_STATUS: dict[type[errors.MemoryError_], tuple[int, str]] = {
    errors.ValidationError: (422, "ValidationError"),
    errors.NotFoundError: (404, "NotFound"),
    errors.TooLargeError: (413, "TooLarge"),
    errors.AuthError: (401, "Unauthorized"),
    errors.ConfigError: (500, "ConfigError"),
    errors.StoreMismatchError: (500, "StoreMismatch"),
    errors.StoreError: (503, "StoreUnavailable"),
}

_HTTP_NAMES = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
               413: "TooLarge", 415: "UnsupportedMediaType", 422: "ValidationError"}


def error_response(status: int, name: str, detail: str) -> JSONResponse:
    """`{"error": name, "detail": detail}` with `status`."""
    # A message may quote what the caller sent; a lone surrogate in it could not be encoded as UTF-8.
    detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONResponse({"error": name, "detail": detail}, status_code=status)


def _describe(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
        msg = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    more = len(exc.errors()) - 5
    return "; ".join(parts) + (f" (and {more} more problems)" if more > 0 else "")


def install_error_handlers(app: FastAPI) -> None:
    """Map library errors, request validation errors and HTTP errors to the API.md error body."""

    @app.exception_handler(errors.MemoryError_)
    async def _library(_: Request, exc: errors.MemoryError_) -> JSONResponse:
        status, name = next(
            (v for k, v in _STATUS.items() if isinstance(exc, k)), (500, type(exc).__name__)
        )
        return error_response(status, name, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "ValidationError", "invalid request: " + _describe(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # Starlette's "error parsing the body": malformed JSON or form data
            why = "" if exc.detail == "There was an error parsing the body" else f" ({exc.detail})"
            return error_response(422, "ValidationError",
                                  f"the request body could not be parsed{why}; send UTF-8 JSON, or a "
                                  "multipart/form-data upload where API.md allows one")
        name = _HTTP_NAMES.get(exc.status_code, "HTTPError")
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return error_response(exc.status_code, name, detail)
