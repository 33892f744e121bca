"""What the sync and async clients share: settings read once, the retry policy, and answers turned into results or
into the error family."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from memory_client._calls import Call
from memory_client._errors import (
    APIError,
    ConnectionFailed,
    MemoryClientError,
    NoAnswer,
    TimedOut,
    error_for_status,
)

__all__ = ["DEFAULT_RETRIES", "DEFAULT_TIMEOUT", "DEFAULT_URL", "RETRYABLE", "Settings", "backoff_s", "failure",
           "namespace_of", "read_answer", "request_args"]

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8000"  # where `memory serve` listens by default
# Connecting is quick or the network is failing (and a refused connect is retried); an answer may take long: a
# document under jobs.background_chars is chunked and embedded on CPU before its request answers.
DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=5.0)
DEFAULT_RETRIES = 2
# Only failures where the request cannot have reached the service: a POST that was sent may have been applied,
# so a read timeout, a dropped answer or an error status is never sent again.
RETRYABLE = (httpx.ConnectError, httpx.ConnectTimeout)
_FIRST_BACKOFF_S = 0.2
_MAX_BACKOFF_S = 2.0


@dataclass(frozen=True)
class Settings:
    """Where to send, with which key, how long to wait and how often to try connecting again."""

    base_url: str
    api_key: str | None = field(repr=False)
    timeout: httpx.Timeout | None  # None: the given http client's own
    retries: int

    @classmethod
    def resolve(cls, base_url: str | None, api_key: str | None, timeout: float | httpx.Timeout | None,
                retries: int, client_url: httpx.URL | None) -> Settings:
        """Arguments first, then a given http client's base_url, then MEMORY_URL / MEMORY_API_KEY, then defaults."""
        if retries < 0:
            raise ValueError(f"retries must be 0 or more, got {retries}")
        url = base_url or (str(client_url) if client_url else "") or os.environ.get("MEMORY_URL") or DEFAULT_URL
        key = api_key if api_key is not None else os.environ.get("MEMORY_API_KEY") or None
        wait = httpx.Timeout(timeout) if timeout is not None else None
        return cls(url.rstrip("/"), key, wait, retries)


def namespace_of(given: str | None, default: str | None) -> str:
    """The call's namespace, else the client's; a ValueError when neither was given."""
    namespace = given if given is not None else default
    if namespace is None:
        raise ValueError("no namespace: pass namespace= to this call, or to the client (Client(namespace='u1'))")
    return namespace


def backoff_s(attempt: int) -> float:
    """The pause before connection attempt `attempt + 1` (0-based): doubling from a fifth of a second."""
    return float(min(_FIRST_BACKOFF_S * 2 ** attempt, _MAX_BACKOFF_S))


def request_args(call: Call[Any], settings: Settings) -> dict[str, Any]:
    """Keyword arguments of httpx's build_request for `call`."""
    args: dict[str, Any] = {"method": call.method, "url": settings.base_url + call.path}
    if settings.api_key:
        args["headers"] = {"authorization": f"Bearer {settings.api_key}"}
    if settings.timeout is not None:
        args["timeout"] = settings.timeout
    for name in ("params", "json", "data", "files"):
        value = getattr(call, name)
        if value is not None:
            args[name] = value
    return args


def read_answer(call: Call[T], response: httpx.Response) -> T:
    """The call's result from a 2xx answer; any other status raises its APIError."""
    if response.is_success:
        return call.read(response)
    raise _api_error(call, response)


def _api_error(call: Call[Any], response: httpx.Response) -> APIError:
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    cls = error_for_status(response.status_code)
    if isinstance(body, Mapping) and isinstance(body.get("error"), str) and isinstance(body.get("detail"), str):
        error, detail = body["error"], body["detail"]
    else:  # a proxy's page, a load balancer's "Bad Gateway": still a sentence, never a JSON traceback
        error = "".join(response.reason_phrase.title().split()) or "HTTPError"
        kind = response.headers.get("content-type", "no content type")
        detail = (f"the answer is not the memory service's error body ({kind}): {response.text[:200]!r}; "
                  "check that the URL points at the service and not at a proxy in front of it")
    return cls(response.status_code, error, detail, method=call.method, path=call.path)


def failure(call: Call[Any], settings: Settings, exc: httpx.TransportError, attempts: int) -> MemoryClientError:
    """The error for a request that got no answer: never sent (ConnectionFailed) or sent and lost."""
    where = f"{call.method} {call.path}"
    reason = str(exc) or type(exc).__name__
    if isinstance(exc, (*RETRYABLE, httpx.UnsupportedProtocol, httpx.ProxyError)):
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return ConnectionFailed(
            f"could not reach the memory service at {settings.base_url} for {where}{tries}: {reason}; is it "
            "running (`memory serve`), and is MEMORY_URL (or base_url=) its address?")
    if isinstance(exc, httpx.TimeoutException):
        return TimedOut(
            f"{where} got no answer from {settings.base_url} within the timeout ({type(exc).__name__}); the "
            "service may still apply it: check before sending it again, or pass a longer timeout=")
    return NoAnswer(f"{where} was sent to {settings.base_url} but its answer was lost ({type(exc).__name__}: "
                    f"{reason}); the service may have applied it: check before sending it again")
