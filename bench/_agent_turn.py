"""A realistic /v1/context request for benchmarks: a research agent's turn over a window it does not fit, every
text drawn from a pool of real sentences so that no two turns share a conversation (nothing is a cache hit)."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

__all__ = ["TOOLS", "WINDOW", "context_body", "questions"]

NAMESPACE = "speed"
WINDOW = 4096  # a turn of several thousand tokens over it: compaction and tool results reduced


def _schema(name: str, description: str, properties: dict[str, str]) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "required": list(properties),
                       "properties": {k: {"type": "string", "description": v} for k, v in properties.items()}}}}


TOOLS = (
    _schema("search_papers", "Search the paper index; answers a JSON list of the best matches with their abstracts.",
            {"q": "what to search for", "year": "only papers of this year or later"}),
    _schema("read_file", "Read a text file of the project.", {"path": "the file's path from the project root"}),
    _schema("run_sql", "Run a read-only SQL query on the results database; answers rows as CSV.",
            {"sql": "one SELECT statement"}),
)
_RULES = ("Never cite a retracted paper.", "Always give the DOI of a paper you name.",
          "Do not use Python 2 syntax in any code.", "Always answer in under 200 words.")


def _call(n: int, name: str, arguments: dict[str, str]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def _sentences(rng: random.Random, pool: Sequence[str], count: int) -> str:
    return " ".join(rng.sample(pool, count))


def _words(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


def context_body(question: str, rng: random.Random, pool: Sequence[str],
                 namespace: str = NAMESPACE) -> dict[str, Any]:
    """A /v1/context request: a research agent's fourth round (19 messages, several thousand tokens) ending in
    `question`, every text drawn from `pool` by `rng` so that no two turns share a conversation."""
    papers = [{"id": rng.randrange(10**6), "title": _words(rng.choice(pool), 8), "abstract": _sentences(rng, pool, 3)}
              for _ in range(8)]
    rows = "\n".join(["id,title,score"] + [f"{rng.randrange(10**5)},{_words(rng.choice(pool), 5)},{rng.random():.3f}"
                                            for _ in range(30)])
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": f"{_sentences(rng, pool, 2)} {rng.choice(_RULES)} Find me papers on this."},
        _call(1, "search_papers", {"q": _words(rng.choice(pool), 6)}),
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(papers, ensure_ascii=False)},
        {"role": "assistant", "content": _sentences(rng, pool, 2)},
        {"role": "user", "content": f"{_words(rng.choice(pool), 12)}? Read the notes file first."},
        _call(2, "read_file", {"path": f"notes/{rng.randrange(100)}.md"}),
        {"role": "tool", "tool_call_id": "c2", "content": _sentences(rng, pool, 14)},
        {"role": "assistant", "content": _sentences(rng, pool, 2)},
        {"role": "user", "content": f"{rng.choice(_RULES)} Check the scores in the database."},
        _call(3, "run_sql", {"sql": f"SELECT id, title, score FROM results WHERE run = {rng.randrange(500)}"}),
        {"role": "tool", "tool_call_id": "c3", "content": rows},
        {"role": "assistant", "content": _sentences(rng, pool, 1)},
        {"role": "user", "content": f"{_words(rng.choice(pool), 10)}?"},
        _call(4, "search_papers", {"q": _words(rng.choice(pool), 5), "year": str(rng.randrange(2000, 2024))}),
        {"role": "tool", "tool_call_id": "c4", "content": json.dumps(papers[::-1][:5], ensure_ascii=False)},
        {"role": "assistant", "content": _sentences(rng, pool, 2)},
        {"role": "user", "content": f"{_sentences(rng, pool, 1)} Compare it with the first paper."},
        {"role": "assistant", "content": _sentences(rng, pool, 3)},
        {"role": "user", "content": question},
    ]
    return {"namespace": namespace, "window": WINDOW, "system": "You are a research assistant. Use the tools to "
            "find and compare papers; cite what you use.", "tools": list(TOOLS), "messages": messages}


def questions(rng: random.Random, pool: Sequence[str], count: int, words: int) -> list[str]:
    """`count` distinct questions of `words` words from the pool."""
    found = dict.fromkeys(_words(s, words).rstrip(".。") + "?" for s in rng.sample(pool, count * 3))
    return list(found)[:count]
