"""The request body's size as it streams in; every other limit is the library's (memory.limits)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit"]


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
