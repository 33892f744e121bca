"""One real `memory serve` per test module (starting one takes seconds), and transports that count and record what
the client sends while a real httpx transport carries it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.server_process import ServerProcess, logged_errors


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The service with no keys configured, on a free loopback port, its own data folder."""
    folder = tmp_path_factory.mktemp("client")
    with ServerProcess(folder / "data", folder / "server.log") as running:
        yield running
        assert logged_errors(running.log_text()) == []


class Recording(httpx.BaseTransport):
    """Sends through a real HTTPTransport and keeps every request it was handed (retries included)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.requests: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class AsyncRecording(httpx.AsyncBaseTransport):
    """The async twin of Recording, over a real AsyncHTTPTransport."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def template_matches(template: str, request: httpx.Request) -> bool:
    """Whether the request's raw path is the OpenAPI template with each {segment} as one encoded segment."""
    pattern = re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template))
    return re.fullmatch(pattern, request.url.raw_path.decode("ascii").split("?")[0]) is not None


def write(path: Path, text: str) -> Path:
    """`text` written to `path` as UTF-8; the path."""
    path.write_text(text, encoding="utf-8")
    return path
