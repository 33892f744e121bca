"""One process at a time per data folder: embedded Chroma is a one-process store.

The holder writes who it is (pid, command, and for a server the address it answers on) into the lock file, so
a second process can say who holds the store, and the CLI can talk to a running server instead.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from memory.errors import StoreBusyError

__all__ = ["LOCK_NAME", "Holder", "StoreLock", "holder_of"]

LOCK_NAME = "memory.lock"


@dataclass(frozen=True)
class Holder:
    """The process that holds a store: its pid, what it runs, and the server's base URL when it is one."""

    pid: int
    command: str
    url: str | None = None


class StoreLock:
    """An exclusive lock on a data folder, held until release() (or the process ends: the kernel drops it)."""

    def __init__(self, root: Path, command: str) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / LOCK_NAME
        self._command = command
        # The file is never deleted: deleting a lock file lets a third process lock a new file beside the old one.
        handle: IO[str] = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            found = holder_of(root)
            raise StoreBusyError(_busy(root, found), found.pid if found else None,
                                 found.url if found else None) from None
        self._handle: IO[str] | None = handle
        self._write(Holder(os.getpid(), command))

    def publish(self, url: str) -> None:
        """Record the address this process serves the store on (read by `memory` commands)."""
        self._write(Holder(os.getpid(), self._command, url))

    def release(self) -> None:
        """Give the store up (idempotent)."""
        if self._handle is None:
            return
        self._handle.truncate(0)
        self._handle.flush()
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None

    def _write(self, holder: Holder) -> None:
        assert self._handle is not None
        self._handle.truncate(0)
        self._handle.write(json.dumps(holder.__dict__))
        self._handle.flush()


def holder_of(root: Path) -> Holder | None:
    """Who holds the store in `root` now; None when nobody does."""
    path = root / LOCK_NAME
    try:
        with open(path, encoding="utf-8") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                text = handle.read()
            else:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                return None
    except FileNotFoundError:
        return None
    try:
        found = json.loads(text)
        return Holder(int(found["pid"]), str(found["command"]), found.get("url"))
    except (ValueError, KeyError, TypeError):
        return Holder(0, "unknown")  # locked, but the holder has not written itself yet


def _busy(root: Path, holder: Holder | None) -> str:
    if holder is not None and holder.url and holder.command == "mcp":
        return (f"the store in {root} is held by an agent's `memory mcp` (pid {holder.pid}), which serves it to "
                f"the other agents and `memory` commands at {holder.url}; point clients there, or stop that agent "
                "(its MCP client) and run the command again")
    if holder is not None and holder.url:
        return (f"the store in {root} is held by a running server (pid {holder.pid}, {holder.url}); `memory` "
                "commands that read or write memory talk to it, but this one needs the store itself: stop the "
                f"server (Ctrl-C, or kill {holder.pid}) and run the command again")
    who = f"`memory {holder.command}` (pid {holder.pid})" if holder and holder.pid else "another process"
    return (f"the store in {root} is in use by {who}; embedded Chroma serves one process at a time: wait for it "
            "to finish, or use another --data folder")
