"""Memory.namespaces: every namespace that holds something, with its counts per tier."""

from __future__ import annotations

from memory import MemoryTurn, NamespaceCounts, TextInput
from memory.config import Config
from memory.embedding import Embedder
from memory.service import Memory
from tests.conftest import ManualClock


def test_counts_per_tier_for_each_namespace(memory: Memory) -> None:
    memory.facts.observe("u1", "以后不要用Python 2的语法，预算不超过500元。")
    memory.facts.observe("u1", "I prefer dark roast coffee.")
    memory.facts.observe("u1", "预算不超过800元。")  # a new version: still one fact in force for the key
    memory.add_document("u1", TextInput("The loader streams rows in batches.\n\n京沪高速铁路全长一千三百多公里。", doc_id="d1"))
    memory.remember("u1", [MemoryTurn("I moved to Berlin last May.", speaker="Anna")])
    memory.tasks.add("u1", "t-1", "note", "keep going")
    memory.tasks.add("tasks-only", "t-1", "note", "only a task")
    chunks = sum(d.chunks for d in memory.experience.list_documents("u1"))
    assert memory.namespaces() == [
        NamespaceCounts("tasks-only", tasks=1, task_items=1),
        NamespaceCounts("u1", facts=3, pinned=2, documents=1, memories=1, chunks=chunks, tasks=1, task_items=1),
    ]


def test_only_the_namespaces_accepted_are_counted(memory: Memory) -> None:
    memory.facts.observe("alice", "Never use Python 2 syntax.")
    memory.facts.observe("bob", "Never use Python 2 syntax.")
    assert [n.namespace for n in memory.namespaces(lambda ns: ns == "alice")] == ["alice"]
    assert memory.namespaces(lambda ns: False) == []


def test_an_empty_store_has_no_namespaces(memory: Memory) -> None:
    assert memory.namespaces() == []


def test_health_adds_up_what_the_namespaces_view_counts_expired_items_left_out(config: Config,
                                                                               embedder: Embedder) -> None:
    clock = ManualClock()
    with Memory(config, embedder=embedder, clock=clock) as memory:
        memory.facts.observe("u1", "以后不要用Python 2的语法。")
        memory.facts.observe("u2", "Never use tabs.")
        memory.add_document("u1", TextInput("The loader streams rows in batches.", doc_id="d1"))
        memory.tasks.add("u1", "t-1", "note", "keep going")
        memory.tasks.add("u2", "t-2", "note", "gone in a minute", ttl_s=60)
        clock.advance(120)  # u2's item expires; nothing has purged it yet
        views = memory.namespaces()
        counts = memory.health().counts
        assert counts == {"facts": sum(n.facts for n in views), "documents": sum(n.documents for n in views),
                          "chunks": sum(n.chunks for n in views), "task_items": sum(n.task_items for n in views),
                          "namespaces": len(views)}
        assert counts["task_items"] == 1 and counts["namespaces"] == 2
        assert memory.store.db.execute("SELECT count(*) FROM task_items").fetchone()[0] == 2  # still stored
