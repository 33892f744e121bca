"""Chunking speed on ~50 English and ~50 Chinese paragraphs, against the model's raw encode rate on the same sentences.

Run from the project root: `.venv/bin/python -m bench.chunk_bench` (reads ../shared/benchdata, copies nothing).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from memory.chunking.chunker import chunk_text
from memory.chunking.structure import parse_sections
from memory.config import load_config
from memory.embedding import load_embedder
from memory.text.sentences import sentence_spans
from memory.tokens import get_counter

_DATA = Path(__file__).resolve().parents[2] / "shared" / "benchdata"


def english(data: Path, count: int) -> list[str]:
    """The first `count` SciFact abstracts."""
    with gzip.open(data / "beir_scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        abstracts = (json.loads(line)["text"] for line in fh)
        return [text for text, _ in zip(abstracts, range(count), strict=False)]


def chinese(data: Path, count: int) -> list[str]:
    """The first `count` CMRC 2018 dev paragraphs."""
    with gzip.open(data / "zh_cmrc2018" / "cmrc2018_dev.squad.json.gz", "rt", encoding="utf-8") as fh:
        articles = json.load(fh)["data"]
    return [p["context"] for article in articles for p in article["paragraphs"]][:count]


def main() -> None:
    """Print one row per language."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=_DATA, help="the benchdata folder")
    parser.add_argument("--paragraphs", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=2, help="runs per measurement; the fastest is shown")
    args = parser.parse_args()
    config = load_config()
    counter = get_counter(config.tokenizer.encoding)
    embedder = load_embedder(config.embedding)
    embedder.encode_documents(["warm up the model", "预热模型"])
    print(f"chunking: {config.chunking}")
    print(
        f"{'lang':<4} {'paras':>5} {'tokens':>7} {'sents':>6} {'chunks':>6} {'chunk s':>8} {'chunks/s':>9} "
        f"{'sents/s':>8} {'raw enc s':>9} {'raw sents/s':>11} {'overhead':>9} {'no-model s':>10}"
    )
    for lang, paragraphs in (("en", english(args.data, args.paragraphs)), ("zh", chinese(args.data, args.paragraphs))):
        document = "\n\n".join(paragraphs)
        sentences = [
            block.text[start:end]
            for section in parse_sections(document)
            for block in section.blocks
            for start, end in sentence_spans(block.text)
        ]
        # Best of `repeat` runs, alternating, so load from other processes on the machine skews both alike.
        raw = piped = bare = float("inf")
        for _ in range(args.repeat):
            began = time.perf_counter()
            embedder.encode_documents(sentences)
            raw = min(raw, time.perf_counter() - began)
            began = time.perf_counter()
            chunks = chunk_text(document, counter, embedder, config.chunking)
            piped = min(piped, time.perf_counter() - began)
            began = time.perf_counter()
            chunk_text(document, counter, None, config.chunking)
            bare = min(bare, time.perf_counter() - began)
        print(
            f"{lang:<4} {len(paragraphs):>5} {counter.count(document):>7} {len(sentences):>6} {len(chunks):>6} "
            f"{piped:>8.2f} {len(chunks) / piped:>9.1f} {len(sentences) / piped:>8.1f} {raw:>9.2f} "
            f"{len(sentences) / raw:>11.1f} {(piped - raw) / raw:>8.1%} {bare:>10.3f}"
        )


if __name__ == "__main__":
    main()
