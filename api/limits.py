"""Size checks: the request body as it streams in, and the fields the routes check before calling the library."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory.errors import TooLargeError

__all__ = ["BodyLimit", "check_length"]


def check_length(text: str | None, limit: int, field: str, setting: str) -> None:
    """TooLargeError when `text` has more than `limit` characters."""
    if text is not None and len(text) > limit:
        raise TooLargeError(
            f"{field} has {len(text):,} characters, over the limit of {limit:,} ({setting}); split it or raise the limit"
        )


class BodyLimit:
    """Stop reading a body past `limit` bytes: a chunked upload declares no Content-Length to check up front."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    # An HTTPException passes FastAPI's body reader unchanged and reaches the error table.
                    raise HTTPException(413, f"the request body is over the limit of {self.limit} bytes "
                                             "(limits.max_request_bytes); send less per request")
            return message

        await self.app(scope, counted, send)
