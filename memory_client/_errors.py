"""The one family of errors the client raises: what the service answered, or why no answer came.

    MemoryClientError                 anything that went wrong talking to the service
    ├── APIError                      a non-2xx answer: .status, .error and .detail as the service sent them
    │   ├── Unauthorized              401: no key, or a key the service does not know
    │   ├── NotFound                  404: unknown id, task or document, or a namespace the key may not use
    │   ├── Conflict                  409: a derived document id already names other content
    │   ├── TooLarge                  413: over one of the service's size limits
    │   ├── ValidationFailed          422: invalid input; .detail names the field and what was expected
    │   └── ServiceError              5xx: the service's bug or its operator's problem, not the caller's
    ├── ConnectionFailed              the request never reached the service (after the configured retries)
    ├── NoAnswer                      the request was sent but no whole answer came back: it may have been applied
    │   └── TimedOut                  ... because the answer took longer than the timeout
    └── InvalidAnswer                 a 2xx answer that is not the JSON the contract describes

Statuses the table does not name (405, 403, ...) raise APIError itself. Wrong use of the client's own methods
(no namespace anywhere, neither text nor key to pin) raises ValueError / TypeError at the call, as Python does: those
are bugs in the calling code, not conditions of the service.
"""

from __future__ import annotations

__all__ = [
    "APIError",
    "Conflict",
    "ConnectionFailed",
    "InvalidAnswer",
    "MemoryClientError",
    "NoAnswer",
    "NotFound",
    "ServiceError",
    "TimedOut",
    "TooLarge",
    "Unauthorized",
    "ValidationFailed",
    "error_for_status",
]


class MemoryClientError(Exception):
    """Base of every error the client raises about the service."""


class APIError(MemoryClientError):
    """The service answered with a non-2xx status; `error` and `detail` are its error body's fields."""

    def __init__(self, status: int, error: str, detail: str, *, method: str = "", path: str = "") -> None:
        self.status = status
        self.error = error
        self.detail = detail
        self.method = method
        self.path = path
        where = f"{method} {path} " if method else ""
        super().__init__(f"{where}failed with {status} {error}: {detail}")


class Unauthorized(APIError):
    """401: the service has API keys configured and the request had none, or one it does not know."""


class NotFound(APIError):
    """404: an unknown fact, task, item, document or job, or a namespace the key may not use."""


class Conflict(APIError):
    """409: a document without doc_id whose derived id already names other content (nothing was overwritten)."""


class TooLarge(APIError):
    """413: the request, or a text, batch or metadata in it, is over one of the service's limits."""


class ValidationFailed(APIError):
    """422: the service refused the input; `detail` names the field and what it expected."""


class ServiceError(APIError):
    """5xx: the service failed (a bug, a bad configuration or an unavailable store): retrying will not help you."""


class ConnectionFailed(MemoryClientError):
    """The service could not be reached (refused, unresolvable, connect timeout), so the request was never sent."""


class NoAnswer(MemoryClientError):
    """The request went out but the answer was cut off or never came: a write may have been applied."""


class TimedOut(NoAnswer):
    """The answer did not come within the client's timeout (the request may still be running on the service)."""


class InvalidAnswer(MemoryClientError):
    """A 2xx answer whose body is not the JSON the REST contract describes (a proxy's page, another service)."""


_BY_STATUS: dict[int, type[APIError]] = {401: Unauthorized, 404: NotFound, 409: Conflict, 413: TooLarge,
                                         422: ValidationFailed}


def error_for_status(status: int) -> type[APIError]:
    """The APIError class for an HTTP status: the table above, ServiceError for any 5xx, else APIError."""
    if status >= 500:
        return ServiceError
    return _BY_STATUS.get(status, APIError)
