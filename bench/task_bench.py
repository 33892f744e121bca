"""Task-tier benchmark: add / recall / read latency over 1,000 items, and what offloading saves.

Run: .venv/bin/python bench/task_bench.py [--items 1000] [--recalls 200]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from memory.config import load_config
from memory.embedding import MINILM
from memory.store import open_store
from memory.task import TaskMemory
from memory.tokens import get_counter

T = TypeVar("T")
KINDS = ("tool_result", "note", "observation", "plan", "todo", "result")
ENGLISH = "Ran the loader on batch {i}: 1,204 rows read, 3 rows skipped because the date column was empty. "
CHINESE = "第{i}批数据：读取了一千二百零四行，其中三行因日期列为空而被跳过。"


def _text(i: int) -> str:
    base = (ENGLISH if i % 2 else CHINESE).format(i=i)
    return base * 60 if i % 10 in (0, 5) else base  # one item in five is a large tool dump: offloaded


def _timed(call: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, T]:
    start = time.perf_counter()
    value = call(*args, **kwargs)
    return (time.perf_counter() - start) * 1000, value


def _row(name: str, samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=20, method="inclusive")
    return f"{name:<28}{len(samples):>7}{statistics.median(samples):>10.3f}{cuts[18]:>10.3f}"


def main() -> None:
    """Fill one task with --items items, then time recalls and reads; print two tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--recalls", type=int, default=200)
    args = parser.parse_args()
    counter = get_counter()
    with tempfile.TemporaryDirectory() as folder:
        config = load_config().replace("service", data_dir=str(Path(folder) / "data"))
        store = open_store(config, MINILM)
        tasks = TaskMemory(store, counter, config.tasks)
        timed_adds = [_timed(tasks.add, "bench", "t-1", KINDS[i % len(KINDS)], _text(i)) for i in range(args.items)]
        add_ms = [ms for ms, _ in timed_adds]
        big = [added for _, added in timed_adds if added.offloaded]
        recall_ms = [_timed(tasks.snippets, "bench", "t-1", ["loader", "日期"])[0] for _ in range(args.recalls)]
        read_ms = [_timed(tasks.read, "bench", "t-1", a.key)[0] for a in big]
        page_ms = [_timed(tasks.read, "bench", "t-1", a.key, page=2, page_tokens=200)[0] for a in big]
        candidates = {s.id: s for s in tasks.snippets("bench", "t-1")}
        store.close()

    print(f"task tier, one task of {args.items} items ({len(big)} offloaded), times in ms")
    print(f"{'operation':<28}{'n':>7}{'p50':>10}{'p95':>10}")
    print(_row("add", add_ms))
    print(_row(f"recall (snippets, {len(candidates)} cand.)", recall_ms))
    print(_row("read full offloaded item", read_ms))
    print(_row("read page 2 @200 tokens", page_ms))
    print()
    print(f"{'offloaded item':<16}{'full tokens':>12}{'recalled as':>13}{'saved':>8}")
    for a in big[:4]:
        shown = candidates[a.key].tokens
        print(f"{a.key:<16}{a.tokens:>12,}{shown:>13,}{1 - shown / a.tokens:>8.1%}")


if __name__ == "__main__":
    main()
