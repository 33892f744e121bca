"""What erasing costs per delete (memory.erase), by store size: the delete itself with its vector scrub, and each
step of the erase pass that follows it (Chroma's index persisted, chroma.sqlite3 vacuumed, the WAL truncated).

Real text for FTS5, synthetic unit vectors for Chroma (bench.experience_scale). Each row deletes 3-chunk documents
from one namespace of N chunks and times the steps one after the other, on this thread; then it forgets the whole
namespace and times the pass that removes its collection's folder and rows.

    .venv/bin/python -m bench.erase_cost [--sizes 1000 10000 50000] [--repeat 10]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from bench.experience_scale import SyntheticEncoder, fill, random_chunk, sentence_pool
from memory.clock import utc_now
from memory.config import load_config
from memory.database.sqlite import checkpoint
from memory.embedding import EmbedderIdentity, Progress
from memory.erase import Eraser, flush, orphan_folders, vacuum
from memory.experience import ChunkInput, ExperienceMemory
from memory.experience.dense import VectorIndex
from memory.experience.writer import DocumentWriter
from memory.store import Store, collection_name, open_store
from memory.tokens import get_counter

_DIMENSION = 384


class _Encoder(SyntheticEncoder):
    """SyntheticEncoder, taking the progress callback a document write passes."""

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """One pseudo-random unit vector per text."""
        return super().encode_documents(texts)


def _ms(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f}"


def _timed(samples: list[float], step: Callable[..., object], *args: object) -> None:
    start = time.perf_counter()
    step(*args)
    samples.append(time.perf_counter() - start)


def measure_size(size: int, repeat: int, pool: Sequence[str], rng: random.Random) -> str:
    """One table row: medians over `repeat` deletes from a namespace of `size` chunks."""
    encoder = _Encoder(_DIMENSION)
    with tempfile.TemporaryDirectory(prefix="erase-cost-") as tmp:
        config = load_config().replace("service", data_dir=str(Path(tmp)))
        store = open_store(config, EmbedderIdentity("synthetic", "synthetic", _DIMENSION))
        store.eraser.close()  # the bench runs each step itself: no pass of its own in between
        store.eraser = Eraser(store, store.root / "chroma", delay_s=3600.0)
        fill(DocumentWriter(store, VectorIndex(store), encoder, get_counter(), utc_now), "scale", size, rng, pool)
        memory = ExperienceMemory(store, encoder, get_counter(), config)
        vectors = VectorIndex(store)
        name, chroma = collection_name("scale"), store.root / "chroma"
        checkpoint(store.db_path)
        delete: list[float] = []
        scrub: list[float] = []
        unscrubbed: list[float] = []
        wal: list[float] = []
        cp: list[float] = []
        fl: list[float] = []
        vac: list[float] = []
        sweep: list[float] = []
        for n in range(repeat):
            memory.add_document("scale", f"gone{n}", [ChunkInput(random_chunk(rng, pool), ordinal=i)
                                                      for i in range(3)], content_hash=f"g{n}")
            _timed(delete, memory.delete_document, "scale", f"gone{n}")
            ids = [f"zz{n}-{i}" for i in range(6)]
            vectors.add("scale", ids, encoder.encode_documents(ids))
            _timed(scrub, partial(vectors.delete, "scale", ids[:3], scrub=True))
            _timed(unscrubbed, partial(vectors.delete, "scale", ids[3:], scrub=False))
            wal.append((store.db_path.parent / "memory.db-wal").stat().st_size / 1e6)
            _timed(fl, flush, store.chroma, name)
            _timed(sweep, orphan_folders, chroma)
            _timed(vac, vacuum, chroma / "chroma.sqlite3")
            _timed(cp, _checkpoint_under_lock, store)
        scrub_cost = [a - b for a, b in zip(scrub, unscrubbed, strict=True)]
        total = [a + b + c + d for a, b, c, d in zip(fl, sweep, vac, cp, strict=True)]
        chroma_mb = (chroma / "chroma.sqlite3").stat().st_size / 1e6
        forget: list[float] = []
        forget_pass: list[float] = []
        _timed(forget, memory.delete_namespace, "scale")
        _timed(forget_pass, store.eraser.run)  # the dropped collection's folder and rows, and the WAL
        row = (f"| {size:,} | {_ms(delete)} | {_ms(scrub_cost)} | {_ms(fl)} | {_ms(sweep)} | {_ms(vac)} "
               f"| {_ms(cp)} | {_ms(total)} | {statistics.median(wal):.1f} | {chroma_mb:.1f} "
               f"| {_ms(forget)} | {_ms(forget_pass)} |")
        store.close()
    return row


def _checkpoint_under_lock(store: Store) -> None:
    with store.write_lock:
        checkpoint(store.db_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    pool = sentence_pool()
    rng = random.Random(17)
    print("Erase cost per delete of a 3-chunk document (medians; ms unless marked)")
    print("| chunks in namespace | delete doc (scrub included) | scrub of 3 vectors | pass: persist index "
          "| pass: orphan scan | pass: vacuum chroma.sqlite3 | pass: WAL checkpoint | pass total "
          "| WAL before pass (MB) | chroma.sqlite3 (MB) | forget the namespace | its pass |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        print(measure_size(size, args.repeat, pool, rng), flush=True)


if __name__ == "__main__":
    main()
