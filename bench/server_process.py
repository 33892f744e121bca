"""The real `memory serve` in a subprocess: its own data folder, a free loopback port, /healthz to start, SIGKILL."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Self

import httpx

__all__ = ["ServerProcess", "free_port", "logged_errors"]

ROOT = Path(__file__).resolve().parents[1]
_RAISED = re.compile(r"^\w[\w.]*(Error|Exception): ")


def logged_errors(log: str) -> list[str]:
    """The exception lines of every traceback in a server log, and any line that says the database was locked."""
    return [line.strip() for line in log.splitlines() if _RAISED.match(line) or "database is locked" in line]


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess:
    """One `python -m cli serve --data DIR --port P` process; its output goes to `log`."""

    def __init__(self, data_dir: Path, log: Path, config_file: Path | None = None, root: Path = ROOT) -> None:
        self.data_dir = data_dir
        self.root = root  # the checkout whose code serves (another one for before / after comparisons)
        self.log = log
        self.config_file = config_file
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Base URL of the running server."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self._process.pid if self._process else None

    def start(self, timeout_s: float = 180.0) -> None:
        """Start the server and return once /healthz answers 200; RuntimeError (with the log's tail) otherwise."""
        for _ in range(3):  # another program may take the free port before the server binds it
            if self._launch(timeout_s):
                return
            if "address already in use" not in self.log_text()[-2000:]:
                break
        tail = self.log_text()[-2000:]
        raise RuntimeError(f"the server on port {self.port} did not answer /healthz in {timeout_s:.0f} s:\n{tail}")

    def _launch(self, timeout_s: float) -> bool:
        self.port = free_port()
        command = [sys.executable, "-m", "cli", "serve", "--data", str(self.data_dir), "--port", str(self.port)]
        if self.config_file is not None:
            command += ["--config", str(self.config_file)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
        with self.log.open("ab") as out:
            out.write(f"\n=== start {' '.join(command)}\n".encode())
            out.flush()
            self._process = subprocess.Popen(command, cwd=self.root, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self._process.poll() is None:
            try:
                if httpx.get(self.url + "/healthz", timeout=2.0).status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.kill()
        return False

    def kill(self) -> None:
        """SIGKILL the server (no clean-up runs) and reap it."""
        if self._process is not None and self._process.poll() is None:
            os.kill(self._process.pid, signal.SIGKILL)
        self._wait()

    def stop(self) -> None:
        """Ask the server to shut down (SIGTERM), SIGKILL after 20 s."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def _wait(self) -> None:
        if self._process is not None:
            self._process.wait()
            self._process = None

    def log_text(self) -> str:
        """Everything the server wrote so far (all its runs)."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
