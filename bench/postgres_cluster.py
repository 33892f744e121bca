"""A throwaway PostgreSQL cluster for tests and benches: Debian's server binaries, a data folder under a temp
folder, one port on the loopback interface, gone when stopped.

PostgreSQL refuses to run as root, and CI runs as root: there the cluster is initialised and run as `nobody`
(subprocess's `user=`), in a folder made for it outside pytest's own temp folders (those are private to root).
`make test` installs the `postgresql` package; `server_binaries()` finds it whatever its major version.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any, Self

__all__ = ["PostgresCluster", "server_binaries"]

_USER = "memory"  # the cluster's superuser role (not an operating-system user)


def server_binaries() -> Path | None:
    """The folder holding initdb and pg_ctl (the newest installed major version), or None without a server."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """`with PostgresCluster() as pg:` a running cluster; `pg.url("db")` after `pg.create_database("db")`."""

    def __init__(self) -> None:
        binaries = server_binaries()
        if binaries is None:
            raise RuntimeError("no PostgreSQL server is installed (Debian's `postgresql` package: make test "
                               "installs it)")
        self.bin = binaries
        self.port = 0
        self.folder: Path | None = None
        self._as: dict[str, Any] = {"user": "nobody", "group": "nogroup"} if os.geteuid() == 0 else {}

    @property
    def data(self) -> Path:
        """The cluster's data folder."""
        assert self.folder is not None, "the cluster is not started"
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        """A libpq URL of `database` on this cluster (trust authentication on the loopback interface)."""
        return f"postgresql://{_USER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> Self:
        """initdb into a new folder, then start the server and wait until it accepts connections."""
        self.folder = Path(tempfile.mkdtemp(prefix="memory-pg-"))
        self.folder.chmod(0o755)
        if self._as:
            shutil.chown(self.folder, self._as["user"], self._as["group"])
        self._run("initdb", "-D", str(self.data), "-U", _USER, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
        for _ in range(5):  # another process may take the port between choosing and binding it
            self.port = _free_port()
            started = self._run(
                "pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w", "-t", "60",
                "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
                      "-c max_connections=200", "start", check=False)
            if started.returncode == 0:
                return self
        raise RuntimeError(f"PostgreSQL did not start: {self.log_text()[-2000:]}")

    def create_database(self, name: str, template: str | None = None) -> str:
        """Create a database (empty, or a copy of `template`); its URL."""
        copy = ["-T", template] if template else []
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", _USER, *copy, name)
        return self.url(name)

    def log_text(self) -> str:
        """The server's log so far."""
        path = None if self.folder is None else self.folder / "server.log"
        return path.read_text(errors="replace") if path is not None and path.exists() else ""

    def stop(self) -> None:
        """Stop the server at once and remove its folder."""
        if self.folder is None:
            return
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(self.bin / program), *args], capture_output=True, text=True, timeout=120,
                              cwd=self.folder, check=False, **self._as)
        if check and done.returncode != 0:
            raise RuntimeError(f"{program} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
        return done

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

