"""The outermost wrapper's fairness: requests with a large body (text to read, which holds the interpreter) run one
after another, and the others go on beside them. The app under the guard here is a stand-in that only counts how
many requests it is running at once."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from api.guard import HEAVY_BYTES, Guard
from api.metrics import Metrics

pytestmark = pytest.mark.anyio


@pytest.fixture()
def anyio_backend() -> str:
    return "asyncio"


async def test_large_bodies_run_one_at_a_time_and_small_ones_beside_them() -> None:
    running = {"large": 0, "small": 0}
    most = {"large": 0, "small": 0}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = dict(scope["headers"])[b"x-kind"].decode()
        running[kind] += 1
        most[kind] = max(most[kind], running[kind])
        await anyio.sleep(0.05)
        running[kind] -= 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = Guard(app, limit=10 * HEAVY_BYTES, metrics=Metrics)

    async def request(kind: str) -> None:
        size = HEAVY_BYTES + 1 if kind == "large" else 1000
        scope = {"type": "http", "method": "POST", "path": "/v1/context", "headers": [
            (b"host", b"127.0.0.1:8000"), (b"content-length", str(size).encode()), (b"x-kind", kind.encode())]}

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(_: dict[str, Any]) -> None:
            return None

        await guard(scope, receive, send)

    async with anyio.create_task_group() as group:
        for kind in ["large", "small"] * 4:
            group.start_soon(request, kind)
    assert most == {"large": 1, "small": 4}
