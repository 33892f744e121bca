"""What the race tests share: random unit vectors, and reader threads running while a test writes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["readers", "unit_vectors"]


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """`n` random unit vectors of MiniLM's dimension."""
    rows = rng.normal(size=(n, 384)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


@contextmanager
def readers(read: Callable[[], None], count: int) -> Iterator[list[BaseException]]:
    """`count` threads calling `read` over and over while the block runs; yields what they raised (stopped and
    joined when the block ends, however it ends)."""
    failures: list[BaseException] = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                read()
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=loop) for _ in range(count)]
    for thread in threads:
        thread.start()
    try:
        yield failures
    finally:
        stop.set()
        for thread in threads:
            thread.join()
