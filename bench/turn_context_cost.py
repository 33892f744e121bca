"""What mixing turn vectors with their neighbours (`[retrieval] turn_context`) costs writes and the store's open.

    .venv/bin/python -m bench.turn_context_cost [--turns 10000 100000]

For each size: a store of that many conversation turns (one sentence each, sessions of 20 turns a minute apart,
a session a day; synthetic vectors, so that Chroma and SQLite are measured without the model), written 200
turns per call as /v1/memories would. Then, alternating on the same store: one more turn, and one more batch of
20, with turn_context 0.25 and with 0 (own vectors; the own embedding is still kept). Last, the re-mix of every
turn after a changed turn_context (nothing encoded; Memory runs it on a background thread after opening) and a
repair with nothing to do (what every open runs).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.experience_scale import SyntheticEncoder, sentence_pool
from memory.clock import utc_now
from memory.config import load_config
from memory.embedding import load_embedder
from memory.experience import ExperienceMemory, MemoryTurn
from memory.store import open_store
from memory.tokens import get_counter

NAMESPACE = "talk"
START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)


def turn(n: int, rng: random.Random, pool: list[str]) -> MemoryTurn:
    """The n-th turn: sessions of 20 turns a minute apart, one session a day."""
    when = START + timedelta(days=n // 20, minutes=n % 20)
    return MemoryTurn(text=rng.choice(pool), speaker=("Ann", "Bob")[n % 2], timestamp=when.isoformat())


def measure(size: int, pool: list[str], repeats: int) -> None:
    """Build `size` turns, then time writes and opens; prints one block of figures."""
    rng = random.Random(size)
    base = load_config()
    dimension = load_embedder(base.embedding).dimension
    with tempfile.TemporaryDirectory(prefix="turn-context-") as tmp:
        config = base.replace("service", data_dir=str(Path(tmp) / "data"))
        store = open_store(config, load_embedder(base.embedding).identity)
        encoder = SyntheticEncoder(dimension)
        memories = {w: ExperienceMemory(store, encoder, get_counter(), config.replace("retrieval", turn_context=w),
                                        utc_now) for w in (0.25, 0.0)}
        started = time.perf_counter()
        for first in range(0, size, 200):
            memories[0.25].add_memories(NAMESPACE, [turn(n, rng, pool) for n in range(first, min(size, first + 200))])
        build = time.perf_counter() - started
        single: dict[float, list[float]] = {0.25: [], 0.0: []}
        batch: dict[float, list[float]] = {0.25: [], 0.0: []}
        n = size
        for _ in range(repeats):
            for weight, memory in memories.items():
                started = time.perf_counter()
                memory.add_memories(NAMESPACE, [turn(n, rng, pool)])
                single[weight].append(time.perf_counter() - started)
                n += 20  # a new session: the next day
                started = time.perf_counter()
                memory.add_memories(NAMESPACE, [turn(m, rng, pool) for m in range(n, n + 20)])
                batch[weight].append(time.perf_counter() - started)
                n += 20
        started = time.perf_counter()
        report = ExperienceMemory(store, encoder, get_counter(), config.replace("retrieval", turn_context=0.3),
                                  utc_now).repair()
        remix = time.perf_counter() - started
        started = time.perf_counter()
        again = memories[0.25].repair()  # back to 0.25: everything re-mixed once more
        started2 = time.perf_counter()
        idle = memories[0.25].repair()
        done = time.perf_counter()
        store.close()
    print(f"\n{size:,} turns: built in {build:.0f} s ({size / build:.0f} turns/s, 200 a call, turn_context 0.25)")
    print("| write (median ms) | turn_context 0.25 | turn_context 0 |")
    print("|---|---|---|")
    for name, samples in (("1 turn", single), ("20 turns", batch)):
        mixed, own = (statistics.median(samples[w]) * 1000 for w in (0.25, 0.0))
        print(f"| {name} | {mixed:.1f} | {own:.1f} |")
    print(f"re-mix of every turn after a turn_context change (Memory runs it in the background after opening): "
          f"{remix:.1f} s ({report.mixed_turns:,} turns), and back: {started2 - started:.1f} s "
          f"({again.mixed_turns:,}); repair with nothing to do: {done - started2:.1f} s ({idle.mixed_turns} re-mixed)")


def main() -> None:
    """Measure every size asked for."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    pool = sentence_pool()
    for size in args.turns:
        measure(size, pool, args.repeats)


if __name__ == "__main__":
    main()
