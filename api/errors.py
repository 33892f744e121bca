"""The one table from library errors to HTTP statuses, and the JSON error body of API.md."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from memory import errors

__all__ = [
    "ERROR_RESPONSES", "ErrorPublic", "error_name", "error_response", "field_problems", "install_error_handlers",
    "json_problem", "library_status", "parse_problem",
]


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
    500: {"model": ErrorPublic, "description": "a bug (InternalError) or the operator's problem (ConfigError, ...)"},
}

_STATUS: dict[type[errors.MemoryError_], tuple[int, str]] = {
    errors.ValidationError: (422, "ValidationError"),
    errors.NotFoundError: (404, "NotFound"),
    errors.ConflictError: (409, "Conflict"),
    errors.TooLargeError: (413, "TooLarge"),
    errors.AuthError: (401, "Unauthorized"),
    errors.ConfigError: (500, "ConfigError"),
    errors.StoreMismatchError: (500, "StoreMismatch"),
    errors.StoreError: (503, "StoreUnavailable"),
}

def library_status(exc: errors.MemoryError_) -> tuple[int, str]:
    """The HTTP status and the error body's short name for a library error (the REST answer, and an MCP tool's)."""
    return next((v for k, v in _STATUS.items() if isinstance(exc, k)), (500, type(exc).__name__))


def error_name(kind: str) -> str:
    """The error body's short name for a library error by its class name (how an ingest job records its failure)."""
    return next((name for cls, (_, name) in _STATUS.items() if cls.__name__ == kind), kind)


_HTTP_NAMES = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
               409: "Conflict", 413: "TooLarge", 415: "UnsupportedMediaType", 422: "ValidationError"}

_LOCATIONS = ("body", "query", "path", "header", "cookie")  # where a field came from, not part of its name
_log = logging.getLogger(__name__)


def error_response(status: int, name: str, detail: str) -> JSONResponse:
    """`{"error": name, "detail": detail}` with `status`."""
    # A message may quote what the caller sent; a lone surrogate in it could not be encoded as UTF-8.
    detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONResponse({"error": name, "detail": detail}, status_code=status)


_JSON_KINDS = {list: "a JSON array", str: "a JSON string", int: "a number", float: "a number", bool: "true or false",
               type(None): "null"}


def _describe(exc: RequestValidationError, content_type: str) -> str:
    errs = exc.errors()
    if errs and tuple(errs[0].get("loc", ())) == ("body",) and errs[0].get("type") == "model_attributes_type":
        if "json" not in content_type.lower():  # a form, or text: FastAPI read no object at all
            sent = content_type.split(";")[0].strip() or "no content-type"
            return (f"the request body must be a JSON object (content-type application/json), and it was sent as "
                    f"{sent}; send the fields as JSON")
        got = _JSON_KINDS.get(type(errs[0].get("input")), "not an object")
        return f"the request body must be a JSON object of the fields, and it is {got}; send {{\"namespace\": ...}}"
    if errs and errs[0].get("type") == "json_invalid":  # FastAPI's own parse of the body
        return "the request body is not valid JSON: " + json_problem(
            str(errs[0].get("ctx", {}).get("error", "it could not be parsed")), exc.body, errs[0]["loc"][-1])
    return "invalid request: " + field_problems(errs, located=True)


def field_problems(errs: Sequence[Any], *, located: bool = False) -> str:
    """`where: what; ...` for pydantic's errors (the first five, and how many more there are).

    `located`: each error's path starts with where the field came from (FastAPI's "body", "query", ...), which is
    left out; a model validated directly has no such part (and may have a field named "query").
    """
    parts = []
    for err in errs[:5]:
        loc = list(err.get("loc", ()))
        if located and loc and loc[0] in _LOCATIONS:
            loc = loc[1:]
        where = ".".join(str(p) for p in loc)
        msg = str(err.get("msg", "is invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {msg}" if where else msg)
    more = len(errs) - 5
    return "; ".join(parts) + (f" (and {more} more problems)" if more > 0 else "")


def json_problem(message: str, document: object, position: object) -> str:
    """`message at line L, column C (character N); send UTF-8 JSON`: where a JSON parser stopped, in a sentence."""
    if isinstance(position, int) and isinstance(document, str | bytes):
        text = document if isinstance(document, str) else document.decode("utf-8", "replace")
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        return f"{message} at line {line}, column {column} (character {position}); send UTF-8 JSON"
    return f"{message}; send UTF-8 JSON"


def parse_problem(cause: BaseException | None) -> str:
    """` (why)`: what stopped a JSON parser that raised no JSONDecodeError, when it says; else ''."""
    if isinstance(cause, RecursionError):
        return " (it nests too deeply to read; flatten it)"
    if isinstance(cause, ValueError) and "digits" in str(cause):
        return (f" (a number in it has more than {sys.get_int_max_str_digits():,} digits, which cannot be read; "
                "send it as a string)")
    return ""


def install_error_handlers(app: FastAPI) -> None:
    """Map library errors, request validation errors and HTTP errors to the API.md error body."""

    @app.exception_handler(errors.MemoryError_)
    async def _library(_: Request, exc: errors.MemoryError_) -> JSONResponse:
        status, name = library_status(exc)
        return error_response(status, name, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(422, "ValidationError", _describe(exc, request.headers.get("content-type", "")))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug: the caller gets the API.md error body, the log the traceback (Starlette re-raises it after this).
        _log.error("unexpected %s answering %s %s", type(exc).__name__, request.method, request.url.path,
                   exc_info=exc)
        return error_response(500, "InternalError",
                              f"the service failed unexpectedly ({type(exc).__name__}); this is a bug, logged with "
                              "its traceback: report it with the time of the request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # Starlette's "error parsing the body": malformed JSON or form data
            why = "" if exc.detail == "There was an error parsing the body" else f" ({exc.detail})"
            why = parse_problem(exc.__cause__) or why
            return error_response(422, "ValidationError",
                                  f"the request body could not be parsed{why}; send UTF-8 JSON, or a "
                                  "multipart/form-data upload where API.md allows one")
        name = _HTTP_NAMES.get(exc.status_code, "HTTPError")
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return error_response(exc.status_code, name, detail)
