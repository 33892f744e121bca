"""The service beside an agent's `memory mcp`: what lets several agents and the CLI share one data folder.

Embedded Chroma serves one process, so the first `memory mcp` on a folder opens the store and also serves it over
HTTP on a loopback port it records in the store's lock (memory.lock); a second agent's `memory mcp`, `memory stats`
and the other commands find that address there and talk to it, as they do to `memory serve`. When the process that
holds the store ends, a relay whose calls find nobody opens the store itself and serves it in turn (api.mcp.relay).
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import uvicorn

from api.app import create_app
from memory.config import Config
from memory.errors import StoreBusyError
from memory.service import Memory

__all__ = ["Beside", "open_or_find", "serve_beside"]

# How long a `memory mcp` waits for the process that took the store a moment before it to say where it serves it
# (it loads the model first), or for a command that holds the store briefly (`memory ingest`) to finish.
WAIT_S = 120.0


@dataclass
class Beside:
    """A store served over HTTP from this process: its address, and how to stop serving."""

    memory: Memory
    url: str
    _server: uvicorn.Server
    _thread: threading.Thread

    def stop(self) -> None:
        """Stop answering HTTP, then close the store (and so give up its lock)."""
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self.memory.close()


def serve_beside(memory: Memory, config: Config, *, timeout_s: float = 30.0) -> Beside:
    """Serve `memory` on 127.0.0.1 at a free port from a background thread, and record the address in its lock."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listening.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listening.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(create_app(config, memory), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, name="mcp-beside", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"the service beside `memory mcp` did not start on {url}")
        time.sleep(0.02)
    memory.lock.publish(url)
    return Beside(memory, url, server, thread)


def open_or_find(config: Config, wait_s: float = WAIT_S) -> tuple[Beside | None, str]:
    """Open the store and serve it beside this process, or find where the process that holds it serves it: (the
    Beside when this process serves it, else None; the address). While the holder has not said where it serves
    the store (it is starting, or is a command that does not serve), wait for that or for the store to be free."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            memory = Memory(config, command="mcp")
        except StoreBusyError as exc:
            if exc.url:
                return None, exc.url
            if time.monotonic() > deadline:
                raise
            time.sleep(0.25)
            continue
        try:
            beside = serve_beside(memory, config)
        except BaseException:
            memory.close()
            raise
        return beside, beside.url
