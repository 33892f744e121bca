"""A throwaway `chroma run` server for tests and benches: its own folder, one port on the loopback interface."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

__all__ = ["ChromaServer"]


class ChromaServer:
    """`with ChromaServer() as chroma:` a running server at 127.0.0.1:`chroma.port`, removed when it stops."""

    def __init__(self) -> None:
        self.port = 0
        self.folder: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60.0) -> Self:
        """Start the server in a new folder and wait until it accepts connections."""
        self.folder = Path(tempfile.mkdtemp(prefix="memory-chroma-"))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        chroma = Path(sys.executable).with_name("chroma")
        self._process = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.folder / "data"), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return self
            if self._process.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the Chroma server did not start on port {self.port} within {timeout_s:.0f} s")

    def create_database(self, name: str) -> None:
        """A new database of the default tenant (a `[chroma] database` of its own for one test's store)."""
        import chromadb
        from chromadb.config import Settings

        admin = chromadb.AdminClient(Settings(chroma_api_impl="chromadb.api.fastapi.FastAPI",
                                              chroma_server_host="127.0.0.1", chroma_server_http_port=self.port,
                                              anonymized_telemetry=False))
        admin.create_database(name)

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
