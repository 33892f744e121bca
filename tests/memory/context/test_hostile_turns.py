"""Turns an attacker or an odd agent sends, under pressure (the history must be reduced, so every step reads them):
each is answered within the window, with the right names, and without an error the caller did not cause."""

from __future__ import annotations

from typing import Any

import pytest

from memory.context import ContextRequest
from memory.context.tool_vectors import ToolVectors
from memory.embedding import Embedder
from memory.service import Memory
from memory.tokens import TokenCounter
from tests.memory.context.chat import call
from tests.memory.context.test_assemble import check_fits

FILLER = {"en": "Here is what I found in the logs, line after line. ", "zh": "这是我在日志里一行一行找到的内容。"}


def _conversation(result: str, arguments: str = "{}", *, lang: str = "en", turns: int = 6,
                  ids: str = "c{i}") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(turns):
        messages += [{"role": "user", "content": f"step {i}: " + FILLER[lang] * 40},
                     {"role": "assistant", "content": None,
                      "tool_calls": [call(ids.format(i=i), f"tool_{i}", arguments)]},
                     {"role": "tool", "tool_call_id": ids.format(i=i), "content": result}]
    return [*messages, {"role": "user", "content": "next" if lang == "en" else "继续"}]


NESTED = "[" * 1200 + "]" * 1200
HOSTILE = {
    "nested result": (NESTED, "{}"),
    "nested arguments": ("ok", '{"q": ' + "[" * 990 + "1" + "]" * 990 + "}"),
    "arguments too deep to parse": ("ok", NESTED),
    "deep object": ('{"a":' * 900 + "1" + "}" * 900, "{}"),
    "whitespace run": ("x" + " " * 300_000 + "y", "{}"),
    "digit run": ("7" * 200_000, "{}"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("case", list(HOSTILE))
@pytest.mark.parametrize("window", [1024, 4096])
def test_hostile_results_and_arguments_are_packed_within_the_window(memory: Memory, case: str, window: int,
                                                                    lang: str) -> None:
    result, arguments = HOSTILE[case]
    packed = memory.context(ContextRequest("u1", _conversation(result, arguments, lang=lang), window=window, task_id=f"t-{window}"))
    check_fits(memory, packed)
    assert packed.report.actions  # under pressure: something was reduced


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_id_used_again_keeps_each_answer_with_its_own_tool(memory: Memory, lang: str) -> None:
    # Every call has the id "c1", as some agents' traces do: what is reduced is named by the tool that answered.
    packed = memory.context(ContextRequest("u1", _conversation("row " * 2_000, lang=lang, ids="c1"), window=2048, task_id="t-ids"))
    named = {a.index: a.tool for a in packed.report.actions if a.index is not None and a.tool}
    assert named, packed.report.actions
    for index, tool in named.items():
        assert tool == f"tool_{(index - 2) // 3}", (index, tool)


def test_tool_vectors_are_kept_per_namespace_by_digest_within_their_bytes(embedder: Embedder) -> None:
    vectors = ToolVectors(embedder, max_bytes=64 * embedder.dimension * 4)
    texts = ["search flights: find direct flights between two airports", "查询订单：按订单号查询订单状态"]
    close = vectors("alice", "flights from SFO", texts)
    assert close[0] > close[1] and all(-1 <= c <= 1 for c in close)
    assert vectors("bob", "flights from SFO", texts) == close  # the same answer, from bob's own vectors
    kept = vectors._vectors
    assert kept.namespaces() == {"alice", "bob"} and len(kept) == 4
    assert all(isinstance(digest, bytes) and len(digest) == 32 for _, digest in kept._items)  # no text is kept
    kept.forget("alice")
    assert kept.namespaces() == {"bob"}
    vectors("carol", "x", [f"tool number {i}" for i in range(100)])
    assert kept._total <= 64 * embedder.dimension * 4 and len(kept) == 64  # the least recent went first
    assert kept._total == sum(weight for _, weight in kept._items.values())
    assert kept.namespaces() == {"carol"}


def test_deleting_a_namespace_forgets_its_tool_vectors(memory: Memory) -> None:
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": f"does thing {i} " * 60,
                                               "parameters": {"type": "object", "properties": {}}}}
             for i in range(30)]
    memory.context(ContextRequest("gone", _conversation("row " * 2_000), window=4096, tools=tools, task_id="t-tools"))
    memory.context(ContextRequest("kept", _conversation("row " * 2_000), window=4096, tools=tools, task_id="t-tools"))
    assert memory._tool_vectors._vectors.namespaces() >= {"gone", "kept"}
    memory.delete_namespace("gone")
    assert "gone" not in memory._tool_vectors._vectors.namespaces()
    assert "kept" in memory._tool_vectors._vectors.namespaces()  # another tenant's stay warm


@pytest.mark.parametrize("pinned", ["Never use tabs.", "以后不要用表格。"], ids=["en", "zh"])
def test_a_delete_forgets_its_own_namespace_s_caches_only(memory: Memory, pinned: str) -> None:
    memory.context(ContextRequest("alice", _conversation("row " * 500), window=32_768, task_id="t-warm"))
    counts = memory._assembler.get()._counter._counts
    warm = len(counts)
    assert warm and counts.namespaces() == {"alice"}
    memory.facts.delete_namespace("bob")
    memory.tasks.delete_namespace("bob")
    memory.experience.delete_namespace("bob")
    memory.tasks.purge_expired()
    assert len(counts) == warm
    memory.context(ContextRequest("bob", _conversation("line " * 500), window=32_768, task_id="t-warm"))
    memory.facts.pin("bob", text=pinned)
    assert counts.namespaces() == {"alice", "bob"}
    memory.facts.delete_namespace("bob")  # a real delete: bob's text may be in any cache, alice's is not
    assert counts.namespaces() == {"alice"} and len(counts) == warm
    assert "bob" not in memory.caches.namespaces()


def test_the_count_of_a_long_whitespace_run_is_the_tokenizer_s_and_never_crashes(counter: TokenCounter) -> None:
    for text in ("hello" + " " * 20_000 + "world", "x" + "\t" * 9_000 + "y" + "\n" * 5_000):
        assert counter.count(text) == len(counter._enc.encode_ordinary(text))
        assert counter.decode(counter.encode(text)) == text
    # A run of a megabyte overflows the tokenizer's own stack (a panic no handler catches); in pieces it is read.
    assert counter.count("x" + " " * 1_500_000 + "y") > 10_000
