"""One process per data folder: the lock, what it says about its holder, and what a second opener hears."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memory import TextInput
from memory.config import Config
from memory.embedding import Embedder
from memory.errors import StoreBusyError
from memory.lock import StoreLock, holder_of
from memory.service import Memory
from tests import ROOT

_HOLD = """
import sys, time
from pathlib import Path
from memory.lock import StoreLock
lock = StoreLock(Path(sys.argv[1]), "ingest")
if len(sys.argv) > 2:
    lock.publish(sys.argv[2])
print("ready", flush=True)
time.sleep(600)
"""


def hold_in_another_process(root: Path, url: str | None = None) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", _HOLD, str(root), *([url] if url else [])], cwd=ROOT,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


def test_a_second_memory_on_one_folder_is_refused_until_the_first_closes(config: Config,
                                                                          embedder: Embedder) -> None:
    first = Memory(config, embedder=embedder, command="ingest")
    with pytest.raises(StoreBusyError, match=r"in use by `memory ingest` \(pid \d+\)") as refused:
        Memory(config, embedder=embedder)
    assert refused.value.pid == os.getpid() and refused.value.url is None
    assert "another --data folder" in str(refused.value)
    first.close()
    with Memory(config, embedder=embedder) as second:
        second.add_document("ns", TextInput("第二个进程现在可以写入了。", doc_id="zh"))
    assert holder_of(config.data_path.resolve()) is None


def test_the_holder_and_its_address_are_readable_from_another_process(tmp_path: Path) -> None:
    process = hold_in_another_process(tmp_path, "http://127.0.0.1:8123")
    try:
        holder = holder_of(tmp_path)
        assert holder is not None and holder.pid == process.pid and holder.url == "http://127.0.0.1:8123"
        with pytest.raises(StoreBusyError, match="held by a running server") as refused:
            StoreLock(tmp_path, "reembed")
        assert f"kill {process.pid}" in str(refused.value)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    # The kernel drops the lock of a killed process: no stale lock file to clean up by hand.
    assert holder_of(tmp_path) is None
    StoreLock(tmp_path, "reembed").release()


def test_a_store_held_elsewhere_is_refused_before_the_model_loads(tmp_path: Path, config: Config) -> None:
    process = hold_in_another_process(config.data_path.resolve())
    try:
        # No embedder passed: were the model loaded first, this would take seconds and then fail anyway.
        with pytest.raises(StoreBusyError, match=f"pid {process.pid}"):
            Memory(config)
    finally:
        process.kill()
        process.wait()
