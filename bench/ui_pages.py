"""How long each web-inspector fragment takes against a real server holding some data, next to the REST call it
lays open (where there is one): what the page costs over what an agent pays.

    .venv/bin/python -m bench.ui_pages [--docs 200] [--turns 400] [--rounds 40]

The store gets English and Chinese documents, conversation turns, facts and one task with an offloaded item;
each fragment is fetched `rounds` times after a warm-up, alternating with its REST twin. Figures are printed only.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.server_process import ServerProcess

_WORDS_EN = ("loader", "batch", "rows", "schema", "retry", "export", "table", "column", "reject", "stream",
             "config", "nightly", "operator", "progress", "validation", "file", "orders", "customer")
_WORDS_ZH = ("加载器", "批次", "数据", "表格", "重试", "导出", "字段", "校验", "文件", "订单", "客户", "进度")
_INSPECTOR = {"X-Inspector": "1"}


def _text(rng: random.Random, words: tuple[str, ...], sentences: int, joiner: str, end: str) -> str:
    return " ".join(joiner.join(rng.choice(words) for _ in range(12)) + end for _ in range(sentences))


def seed(http: httpx.Client, docs: int, turns: int, rng: random.Random) -> None:
    """Documents (half Chinese), turns, facts and a task with an offloaded item in namespace "b"."""
    for i in range(docs):
        zh = i % 2 == 1
        body = "\n\n".join(_text(rng, _WORDS_ZH if zh else _WORDS_EN, 4, "" if zh else " ", "。" if zh else ".")
                           for _ in range(3))
        answer = http.post("/v1/documents", json={"namespace": "b", "text": body, "doc_id": f"doc-{i}"})
        answer.raise_for_status()
    for start in range(0, turns, 100):
        messages = [{"text": _text(rng, _WORDS_EN, 1, " ", "."), "speaker": rng.choice(["Anna", "小王"])}
                    for _ in range(min(100, turns - start))]
        http.post("/v1/memories", json={"namespace": "b", "messages": messages}).raise_for_status()
    for text in ("Never use Python 2 syntax.", "以后不要用Python 2的语法，预算不超过500元。",
                 "I prefer dark roast coffee.", "Always answer in British English.", "我对花生过敏。"):
        http.post("/v1/facts", json={"namespace": "b", "text": text}).raise_for_status()
    long_text = "\n".join(f"line {i}: the loader wrote row {i} to the orders table." for i in range(400))
    for kind, text in (("plan", "先读文件，再写入数据库。"), ("note", "The loader must stream rows."),
                       ("tool_result", long_text)):
        http.post("/v1/tasks/t-1/items", json={"namespace": "b", "kind": kind, "text": text}).raise_for_status()


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered) * 1000:7.1f} | {ordered[max(0, int(len(ordered) * 0.95) - 1)] * 1000:7.1f}"


def cases(http: httpx.Client) -> list[tuple[str, Callable[[], httpx.Response], Callable[[], httpx.Response] | None]]:
    """(name, the fragment request, its REST twin or None)."""
    fact_id = http.get("/v1/facts", params={"namespace": "b"}).json()["facts"][0]["id"]
    messages = [{"role": "system", "content": "You are a careful data engineer."},
                {"role": "user", "content": "How should the loader retry a failed batch?"}]
    question = "How should the loader retry a failed batch?"
    ns = {"namespace": "b"}

    def get(path: str, **params: str) -> Callable[[], httpx.Response]:
        return lambda: http.get(path, params={**ns, **params}, headers=_INSPECTOR)

    def post(path: str, data: dict[str, str]) -> Callable[[], httpx.Response]:
        return lambda: http.post(path, data={**ns, **data}, headers=_INSPECTOR)

    def rest(method: str, path: str, **kwargs: Any) -> Callable[[], httpx.Response]:
        return lambda: http.request(method, path, **kwargs)

    return [
        ("namespaces", lambda: http.get("/ui/fragments/namespaces", headers=_INSPECTOR), rest("GET", "/healthz")),
        ("facts", get("/ui/fragments/facts"), rest("GET", "/v1/facts", params=ns)),
        ("fact history", get("/ui/fragments/facts/history", fact_id=fact_id),
         rest("GET", f"/v1/facts/{fact_id}/history", params=ns)),
        ("extract preview", post("/ui/fragments/facts/preview", {"text": "预算不超过800元。Never use tabs."}), None),
        ("documents", get("/ui/fragments/documents"), rest("GET", "/v1/documents", params=ns)),
        # not a fragment: REST's own page of the list (limit, offset) against the whole list
        ("REST: GET /v1/documents?limit=100", rest("GET", "/v1/documents", params={**ns, "limit": 100}),
         rest("GET", "/v1/documents", params=ns)),
        ("document chunks", get("/ui/fragments/documents/chunks", doc_id="doc-0"),
         rest("GET", "/v1/documents/doc-0", params=ns)),
        ("search", post("/ui/fragments/documents/search", {"query": question}),
         rest("POST", "/v1/search", json={"namespace": "b", "query": question, "k": 10})),
        ("recall", post("/ui/fragments/recall", {"query": question, "budget": "800"}),
         rest("POST", "/v1/recall", json={"namespace": "b", "query": question, "budget": 800})),
        ("context", post("/ui/fragments/context", {"messages": json.dumps(messages), "window": "8192",
                                                    "task_id": "ctx"}),
         rest("POST", "/v1/context", json={"namespace": "b", "messages": messages, "window": 8192, "task_id": "ctx"})),
        ("tasks", get("/ui/fragments/tasks"), None),
        ("task items", get("/ui/fragments/tasks/items", task_id="t-1"), rest("GET", "/v1/tasks/t-1/items", params=ns)),
        ("task page", get("/ui/fragments/tasks/read", task_id="t-1", key="t-1/r3", page="2"),
         rest("GET", "/v1/tasks/t-1/items/t-1/r3", params={**ns, "page": "2"})),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=200)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, ServerProcess(Path(folder) / "data",
                                                                Path(folder) / "server.log") as server:
        with httpx.Client(base_url=server.url, timeout=300) as http:
            started = time.perf_counter()
            seed(http, args.docs, args.turns, random.Random(7))
            print(f"store: {args.docs} documents, {args.turns} turns, 5 fact messages, 1 task "
                  f"(seeded in {time.perf_counter() - started:.0f} s); {args.rounds} rounds each\n")
            print("| fragment | p50 ms | p95 ms | HTML KB | REST twin p50 ms | p95 ms |")
            print("|---|---:|---:|---:|---:|---:|")
            for name, fragment, twin in cases(http):
                for _ in range(3):
                    assert fragment().status_code == 200, name
                    if twin is not None:
                        twin().raise_for_status()
                own: list[float] = []
                other: list[float] = []
                size = 0
                for _ in range(args.rounds):
                    begun = time.perf_counter()
                    answer = fragment()
                    own.append(time.perf_counter() - begun)
                    size = len(answer.content)
                    if twin is not None:
                        begun = time.perf_counter()
                        twin()
                        other.append(time.perf_counter() - begun)
                print(f"| {name} | {_ms(own)} | {size / 1024:6.1f} | {_ms(other) if other else '— | —'} |")


if __name__ == "__main__":
    main()
