"""Run by test_crash.py in a child process: rewrite one document forever until the test kills it (SIGKILL)."""

from __future__ import annotations

import sys

from memory.config import load_config
from memory.embedding import load_embedder
from memory.experience import ChunkInput, ExperienceMemory
from memory.store import open_store
from memory.tokens import get_counter


def version_texts(n: int) -> list[str]:
    """The chunk texts of version n: an English and a Chinese chunk that name n, plus one shared chunk."""
    return [f"Release note number {n}: the loader retries {n} times.", f"第{n}版：加载器重试{n}次。",
            "This paragraph never changes."]


def main() -> None:
    """Write versions 1, 2, 3, ... of document `doc`, printing each committed version."""
    config = load_config().replace("service", data_dir=sys.argv[1])
    embedder = load_embedder(config.embedding)
    memory = ExperienceMemory(open_store(config, embedder.identity), embedder, get_counter(), config)
    n = 0
    while True:
        n += 1
        texts = version_texts(n)
        memory.add_document("ns", "doc", [ChunkInput(t, ordinal=i) for i, t in enumerate(texts)],
                            content_hash=str(n))
        print(n, flush=True)


if __name__ == "__main__":
    main()
