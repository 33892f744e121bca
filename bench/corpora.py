"""Benchmark corpora read from ../shared/benchdata (never copied here), chunked simply by sentences and size."""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from memory.experience.model import ChunkInput
from memory.tokens import get_counter

__all__ = ["DATA", "BenchDoc", "BenchQuery", "Corpus", "chunk_text", "load_cmrc", "load_scifact"]

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "benchdata"

# A sentence ends at . ! ? (followed by space and a capital/digit) or at a Chinese full stop/exclamation/question.
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])|(?<=[。！？；])")


@dataclass(frozen=True)
class BenchDoc:
    """One corpus document: id, title and body text."""

    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class BenchQuery:
    """One query and the ids of its relevant documents."""

    query_id: str
    text: str
    relevant: frozenset[str]


@dataclass(frozen=True)
class Corpus:
    """Documents and queries of one benchmark."""

    name: str
    docs: tuple[BenchDoc, ...]
    queries: tuple[BenchQuery, ...]


def chunk_text(title: str, text: str, target_tokens: int) -> list[ChunkInput]:
    """Sentences packed greedily up to `target_tokens` each, titled by the document; 0 keeps one chunk."""
    if target_tokens <= 0:
        return [ChunkInput(text=text, heading=title, ordinal=0)]
    counter = get_counter()
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in (s.strip() for s in _SENTENCE.split(text)):
        if not sentence:
            continue
        tokens = counter.count(sentence)
        if current and size + tokens > target_tokens:
            chunks.append(" ".join(current) if title.isascii() else "".join(current))
            current, size = [], 0
        current.append(sentence)
        size += tokens
    if current:
        chunks.append(" ".join(current) if title.isascii() else "".join(current))
    return [ChunkInput(text=body, heading=title, ordinal=i) for i, body in enumerate(chunks)]


def load_scifact() -> Corpus:
    """BEIR SciFact: 5,183 abstracts, the 809 train queries with qrels/train.tsv."""
    root = DATA / "beir_scifact"
    with gzip.open(root / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        docs = tuple(BenchDoc(d["_id"], d["title"], d["text"]) for d in map(json.loads, fh))
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (root / "qrels" / "train.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")
        if int(score) > 0:
            relevant[query_id].add(doc_id)
    queries = []
    for line in (root / "queries_train.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["_id"] in relevant:
            queries.append(BenchQuery(q["_id"], q["text"], frozenset(relevant[q["_id"]])))
    return Corpus("scifact", docs, tuple(queries))


def load_cmrc() -> Corpus:
    """CMRC 2018 dev: 848 Wikipedia paragraphs; each question's gold is the paragraph it was asked about."""
    with gzip.open(DATA / "zh_cmrc2018" / "cmrc2018_dev.squad.json.gz", "rt", encoding="utf-8") as fh:
        data = json.load(fh)["data"]
    docs, queries = [], []
    for article in data:
        for paragraph in article["paragraphs"]:
            docs.append(BenchDoc(paragraph["id"], article["title"], paragraph["context"]))
            for qa in paragraph["qas"]:
                queries.append(BenchQuery(qa["id"], qa["question"], frozenset([paragraph["id"]])))
    return Corpus("cmrc2018", tuple(docs), tuple(queries))
