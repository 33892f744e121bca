"""Recall equivalence: the same store, the same requests, byte-identical REST answers before and after a change.

A refactoring of the recall path must not move a single score. This builds one store of real text (LoCoMo
conversations, SciFact abstracts, CMRC paragraphs, facts and task items in English and Chinese) through REST,
then replays a fixed list of recalls (budgets 0 to 4000, filters, task ids, thresholds) and experience searches
on a copy of it, and writes every answer to a JSON-lines file. Run `dump` with each version of the code on the
same built store and `compare` the two files:

    .venv/bin/python -m bench.recall_equivalence build /tmp/eq-store
    .venv/bin/python -m bench.recall_equivalence dump /tmp/eq-store /tmp/after.jsonl
    (cd ../baseline && .venv/bin/python -m bench.recall_equivalence dump /tmp/eq-store /tmp/before.jsonl)
    .venv/bin/python -m bench.recall_equivalence compare /tmp/before.jsonl /tmp/after.jsonl

Vectors come from bench/.cache (bench.embed_cache), so a rebuild encodes nothing new. The clock is fixed, so
freshness tags and fact times are the same in every run. Chroma's HNSW graph is rebuilt from its log when a
store opens and two opens of one store can disagree on a few of 300 approximate neighbours (even with ef_search
above the collection's size), so the dump answers Chroma's queries exactly (cosine over every stored vector, in
float64, ties by id): what remains to differ is the code under test.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.models.Collection import Collection
from fastapi.testclient import TestClient

from api.app import create_app
from bench._recall_data import load_locomo
from bench.corpora import load_cmrc, load_scifact
from bench.embed_cache import CachedEmbedder
from memory import Memory, load_config
from memory.embedding import load_embedder

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
BUDGETS = (0, 40, 150, 400, 1000, 2500, 4000)
FACTS_EN = [
    "Never use Python 2 syntax.", "Only analyse columns A and B.", "My budget is at most 1,200 dollars.",
    "I prefer answers in British spelling.", "Always cite the paper's DOI.",
]
FACTS_ZH = ["以后不要用Python 2的语法。", "预算不超过500元。", "请用中文回答。", "只分析A列和B列。"]

_LOCAL = "http://127.0.0.1:8000"  # without keys the app answers only a loopback Host (api/guard.py)


def _clock() -> datetime:
    return NOW


def _memory(data: Path) -> Memory:
    config = load_config().replace("service", data_dir=str(data))
    return Memory(config, clock=_clock, embedder=CachedEmbedder(load_embedder(config.embedding)))  # type: ignore[arg-type]


def _post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
    response = client.post(path, json=body)
    if response.status_code != 200:
        raise SystemExit(f"{path}: {response.status_code} {response.text[:300]}")
    return response.json()


def build(data: Path, conversations: int, docs: int) -> None:
    """Fill a new store at `data` through REST."""
    if data.exists():
        raise SystemExit(f"{data} exists; build into a new folder")
    with _memory(data) as memory, TestClient(create_app(memory.config, memory), base_url=_LOCAL) as client:
        for conv in load_locomo(conversations):
            turns = [{"text": t.text, "speaker": t.speaker, "timestamp": t.timestamp, "metadata": dict(t.metadata)}
                     for t in conv.turns]
            for start in range(0, len(turns), 200):
                _post(client, "/v1/memories", {"namespace": conv.name, "messages": turns[start:start + 200]})
            for text in FACTS_EN:
                _post(client, "/v1/facts", {"namespace": conv.name, "text": text})
        for corpus, namespace, facts in ((load_scifact(), "sci", FACTS_EN), (load_cmrc(), "zh", FACTS_ZH)):
            for i, doc in enumerate(corpus.docs[:docs]):
                _post(client, "/v1/documents", {
                    "namespace": namespace, "text": doc.text, "title": doc.title, "doc_id": doc.doc_id,
                    "project": "even" if i % 2 == 0 else "odd", "tags": [f"t{i % 3}"],
                    "updated_at": f"20{10 + i % 15:02d}-0{1 + i % 9}-1{i % 9}T08:00:00Z"})
            for text in facts:
                _post(client, "/v1/facts", {"namespace": namespace, "text": text})
            _post(client, "/v1/facts/pin", {"namespace": namespace, "text": facts[0]})
            for i, doc in enumerate(corpus.docs[docs:docs + 12]):
                _post(client, "/v1/tasks/t1/items", {
                    "namespace": namespace, "kind": "tool_result" if i % 2 else "note",
                    "text": doc.text * (1 + i % 4), "ephemeral": i % 3 == 0})
    print(f"built {data}")


def _requests(conversations: int, docs: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, request) pairs in a fixed order: recalls of every namespace, then experience searches."""
    n = 0
    for conv in load_locomo(conversations):
        for question in conv.questions[:120]:
            n += 1
            yield "recall", {"namespace": conv.name, "query": question.text, "budget": BUDGETS[n % len(BUDGETS)]}
        for question in conv.questions[120:135]:
            yield "recall", {"namespace": conv.name, "query": question.text, "budget": 800,
                             "filters": {"kind": "memory"}, "min_score": 0.3}
    for corpus, namespace in ((load_scifact(), "sci"), (load_cmrc(), "zh")):
        asked = [q for q in corpus.queries if any(d.doc_id in q.relevant for d in corpus.docs[:docs])][:100]
        for i, query in enumerate(asked):
            request: dict[str, Any] = {"namespace": namespace, "query": query.text, "budget": BUDGETS[i % len(BUDGETS)]}
            if i % 5 == 1:
                request["task_id"] = "t1"
            if i % 7 == 2:
                request["filters"] = {"project": "even", "tags": ["t1"]}
            if i % 11 == 3:
                request["filters"] = {"updated_from": "2015-01-01T00:00:00Z"}
            if i % 13 == 4:
                request["min_score"] = 0.05
            yield "recall", request
        for query in asked[:50]:
            yield "search", {"namespace": namespace, "query": query.text, "k": 10}
    yield "recall", {"namespace": "sci", "query": "", "budget": 500, "task_id": "t1"}
    yield "recall", {"namespace": "zh", "query": "？！", "budget": 500}


def _search(memory: Memory, request: dict[str, Any]) -> dict[str, Any]:
    experience = memory.experience
    first = next(iter(inspect.signature(experience.explain).parameters))
    if first == "namespace":
        found = experience.explain(request["namespace"], request["query"], k=request["k"])
    else:  # the argument order before the house issue: query first
        found = experience.explain(request["query"], request["namespace"], request["k"])
    return {
        "terms": list(found.terms), "cjk_share": found.cjk_share, "temporal": found.temporal,
        "weights": [found.dense_weight, found.lexical_weight],
        "dense": [list(h) for h in found.dense], "lexical": [list(h) for h in found.lexical],
        "results": [{"id": s.id, "score": s.score, "tokens": s.tokens, "text": s.text, "why": dict(s.why),
                     "metadata": dict(s.metadata), "body_tokens": s.body_tokens} for s in found.results],
    }


def _exact_query(self: Collection, query_embeddings: Any = None, n_results: int = 10, ids: Any = None,
                 include: Any = (), **_: Any) -> dict[str, Any]:
    """Collection.query answered by exact cosine over every stored vector (see the module docstring)."""
    stored = self.get(ids=ids, include=["embeddings"], limit=None if ids else self.count())
    names = list(stored["ids"])
    if not names:
        return {"ids": [[]], "distances": [[]]}
    matrix = np.asarray(stored["embeddings"], dtype=np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    out_ids, out_distances = [], []
    for query in np.atleast_2d(np.asarray(query_embeddings, dtype=np.float64)):
        cosine = matrix @ (query / np.linalg.norm(query))
        order = sorted(range(len(names)), key=lambda i: (-round(float(cosine[i]), 9), names[i]))[:n_results]
        out_ids.append([names[i] for i in order])
        out_distances.append([round(1.0 - float(cosine[i]), 9) for i in order])
    return {"ids": out_ids, "distances": out_distances}


def _exact(memory: Memory) -> None:
    """Chroma's queries answered exactly, and no turn re-mixed while the requests run."""
    Collection.query = _exact_query  # type: ignore[method-assign,assignment]
    memory.experience.remix_in_background().join()


def dump(data: Path, out: Path, conversations: int, docs: int) -> None:
    """Replay the requests on a copy of the store at `data`; one JSON line per answer into `out`."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "data"
        shutil.copytree(data, copy)
        with _memory(copy) as memory, TestClient(create_app(memory.config, memory), base_url=_LOCAL) as client, \
                out.open("w", encoding="utf-8") as fh:
            _exact(memory)
            count = 0
            for kind, request in _requests(conversations, docs):
                if kind == "recall":
                    response = client.post("/v1/recall", json=request)
                    answer: Any = {"status": response.status_code, "body": response.json()}
                else:
                    answer = _search(memory, request)
                fh.write(json.dumps({"kind": kind, "request": request, "answer": answer}, ensure_ascii=False,
                                    sort_keys=True) + "\n")
                count += 1
    print(f"{count} answers written to {out}")


def compare(before: Path, after: Path) -> int:
    """0 when the two dumps are identical line by line; otherwise the first differences and 1."""
    old = before.read_text(encoding="utf-8").splitlines()
    new = after.read_text(encoding="utf-8").splitlines()
    differ = [i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b]
    kinds = [json.loads(line)["kind"] for line in old]
    print(f"{len(old)} vs {len(new)} answers ({kinds.count('recall')} recalls, {kinds.count('search')} searches); "
          f"{len(differ)} differ")
    for i in differ[:5]:
        print(f"line {i + 1}:\n  before {old[i][:400]}\n  after  {new[i][:400]}")
    return 0 if not differ and len(old) == len(new) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("build", "dump", "compare"))
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--conversations", type=int, default=3, help="LoCoMo conversations (one namespace each)")
    parser.add_argument("--docs", type=int, default=300, help="SciFact and CMRC documents each")
    args = parser.parse_args()
    if args.action == "build":
        build(args.paths[0], args.conversations, args.docs)
    elif args.action == "dump":
        dump(args.paths[0], args.paths[1], args.conversations, args.docs)
    else:
        return compare(args.paths[0], args.paths[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
