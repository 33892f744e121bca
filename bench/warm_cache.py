"""Embed the bench corpora once into bench/.cache (run in the background before the first bench run)."""

from __future__ import annotations

import argparse
import sys
import time

from bench.corpora import chunk_text, load_cmrc, load_scifact
from bench.embed_cache import CachedEmbedder
from memory.config import load_config
from memory.embedding import load_embedder
from memory.experience.model import indexed_text


def main() -> None:
    """Embed every chunk of the chosen corpora at the chosen chunk sizes, and every query."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunk-tokens", type=int, nargs="+", default=[200, 0])
    parser.add_argument("--corpus", nargs="+", default=["cmrc2018", "scifact"])
    args = parser.parse_args()
    embedder = CachedEmbedder(load_embedder(load_config().embedding))
    for corpus in [c for c in (load_cmrc(), load_scifact()) if c.name in args.corpus]:
        embedder.encode_queries([q.text for q in corpus.queries])
        for size in args.chunk_tokens:
            texts = [indexed_text(c.text, c.heading) for d in corpus.docs for c in chunk_text(d.title, d.text, size)]
            start = time.perf_counter()
            for i in range(0, len(texts), 512):
                embedder.encode_documents(texts[i:i + 512])
                print(f"{corpus.name} size={size}: {min(i + 512, len(texts))}/{len(texts)} "
                      f"({time.perf_counter() - start:.0f}s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
